package sqlite

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"
)

// DefaultPath is where the sqlite store lives when no path is given:
// helmstore.db in Helm's data directory ($HELM_DATA_HOME, else
// $XDG_DATA_HOME/helm, else ~/.local/share/helm). The path is absolute
// whatever the environment: with HOME unset, the home directory comes from
// the user database. It is "" when no home directory can be found; opening
// the default store then fails, asking for HELM_DATA_HOME or a path.
func DefaultPath() string {
	p, _ := defaultPath()
	return p
}

func defaultPath() (string, error) {
	p := helmDataPath("helmstore.db")
	if filepath.IsAbs(p) {
		return p, nil
	}
	if os.Getenv("HELM_DATA_HOME") != "" {
		// The user's own (relative) directory: from the working directory.
		return filepath.Abs(p)
	}
	// HOME is unset (or XDG_DATA_HOME relative, which the XDG spec says to
	// ignore): Helm's path would be relative to the working directory.
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		u, uerr := user.Current()
		if uerr != nil || !filepath.IsAbs(u.HomeDir) {
			return "", errors.New("no default sqlite database path: HOME is not set and the user has no home directory; set HELM_DATA_HOME or give the database's path")
		}
		home = u.HomeDir
	}
	return filepath.Join(home, ".local", "share", "helm", "helmstore.db"), nil
}

// helmDataPath is where Helm (3 and 4 alike) keeps a data file: under
// $HELM_DATA_HOME, else $XDG_DATA_HOME/helm, else the platform's data
// directory (~/.local/share/helm; ~/Library/helm on macOS; %APPDATA%\helm on
// Windows). The path is relative when the variable it comes from is.
func helmDataPath(name string) string {
	if d := os.Getenv("HELM_DATA_HOME"); d != "" {
		return filepath.Join(d, name)
	}
	base := os.Getenv("XDG_DATA_HOME")
	if base == "" {
		switch runtime.GOOS {
		case "windows":
			base = os.Getenv("APPDATA")
		case "darwin":
			base = filepath.Join(os.Getenv("HOME"), "Library")
		default:
			base = filepath.Join(os.Getenv("HOME"), ".local", "share")
		}
	}
	return filepath.Join(base, "helm", name)
}

// dsnOf turns a path or file: URI into a modernc DSN with the settings
// correctness needs: WAL, a busy timeout, immediate write transactions (so
// two writers queue instead of failing), and full sync unless the caller set
// one.
func dsnOf(conn string) (dsn, path string, memory bool, err error) {
	if conn == "" {
		if conn, err = defaultPath(); err != nil {
			return "", "", false, err
		}
	}
	if conn == ":memory:" {
		return "file::memory:?_pragma=busy_timeout(30000)", "", true, nil
	}
	path, query, _ := strings.Cut(strings.TrimPrefix(conn, "file:"), "?")
	if path == "" {
		return "", "", false, errors.New("sqlite needs a file path")
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", "", false, fmt.Errorf("invalid sqlite URI parameters: %w", err)
	}
	have := strings.Join(q["_pragma"], ",")
	for _, p := range []struct{ name, val string }{{"busy_timeout", "30000"}, {"journal_mode", "WAL"}, {"synchronous", "FULL"}} {
		if !strings.Contains(have, p.name) {
			q.Add("_pragma", p.name+"("+p.val+")")
		}
	}
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode(), path, q.Get("mode") == "memory", nil
}

// sqliteDir checks that the directory of the database at path exists. Only
// the default location's directories (Helm's data directory, which a fresh
// machine lacks) are created: elsewhere a missing directory is more likely a
// typo in the path than a wish for a new, empty store.
func sqliteDir(path string, isDefault bool) error {
	dir := filepath.Dir(path)
	if !isDefault {
		if def, err := defaultPath(); err == nil {
			if abs, err := filepath.Abs(path); err == nil && abs == def {
				isDefault = true
			}
		}
	}
	if isDefault {
		return os.MkdirAll(dir, 0o700)
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("sqlite database %s: directory %s does not exist (helmstore creates the database file, not missing directories, except for the default location, DefaultPath)", path, dir)
	case err != nil:
		return fmt.Errorf("sqlite database %s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("sqlite database %s: %s is not a directory", path, dir)
	}
	return nil
}
