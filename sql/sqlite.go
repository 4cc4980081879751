package sql

import (
	"context"
	stdsql "database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"time"

	"github.com/pressly/goose/v3"
	"helm.sh/helm/v3/pkg/helmpath"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/filelock"
)

func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

var sqliteDialect = dialect{
	name:      "sqlite",
	goose:     goose.DialectSQLite3,
	returning: true,
	isUnique: func(err error) bool {
		c := sqliteCode(err)
		return c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || c == sqlite3.SQLITE_CONSTRAINT_UNIQUE
	},
	isRetryable: func(err error) bool {
		c := sqliteCode(err) & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	},
}

// DefaultSQLitePath is where the sqlite store lives when no path is given:
// helmstore.db in Helm's data directory ($HELM_DATA_HOME, else
// $XDG_DATA_HOME/helm, else ~/.local/share/helm). The path is absolute
// whatever the environment: with HOME unset, the home directory comes from
// the user database. It is "" when no home directory can be found; opening
// the default store then fails, asking for HELM_DATA_HOME or a path.
func DefaultSQLitePath() string {
	p, _ := defaultSQLitePath()
	return p
}

func defaultSQLitePath() (string, error) {
	p := helmpath.DataPath("helmstore.db")
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

// sqliteDSN turns a path or file: URI into a modernc DSN with the settings
// correctness needs: WAL, a busy timeout, immediate write transactions (so
// two writers queue instead of failing), and full sync unless the caller set
// one.
func sqliteDSN(conn string) (dsn, path string, memory bool, err error) {
	if conn == "" {
		if conn, err = defaultSQLitePath(); err != nil {
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

// openSQLite opens (creating if needed) a SQLite store at a file path. The
// file's directory must exist, unless it is the default location.
func openSQLite(ctx context.Context, cfg *driver.Config) (driver.Store, error) {
	dsn, path, memory, err := sqliteDSN(cfg.ConnectionString)
	if err != nil {
		return nil, err
	}
	if path != "" && !memory {
		if err := sqliteDir(path, cfg.ConnectionString == ""); err != nil {
			return nil, err
		}
	}
	connector, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	db := stdsql.OpenDB(lockConnector{connector})
	if memory {
		// Every connection to :memory: is a new database: keep one.
		db.SetMaxOpenConns(1)
	}
	d := sqliteDialect
	d.lockMigrations = func(ctx context.Context, db *stdsql.DB) (goose.ProviderOption, func(), error) {
		if memory {
			return nil, func() {}, nil
		}
		// The lock file gets the database's owner and mode, so that a run
		// as root does not lock the database's owner out.
		unlock, err := filelock.LockLike(ctx, path+".migrate-lock", path)
		return nil, unlock, err
	}
	b, err := newBackend(ctx, db, &d)
	if err != nil {
		return nil, err
	}
	return backend.New(b, cfg), nil
}

// sqliteDir checks that the directory of the database at path exists. Only
// the default location's directories (Helm's data directory, which a fresh
// machine lacks) are created: elsewhere a missing directory is more likely a
// typo in the path than a wish for a new, empty store.
func sqliteDir(path string, isDefault bool) error {
	dir := filepath.Dir(path)
	if !isDefault {
		if def, err := defaultSQLitePath(); err == nil {
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
		return fmt.Errorf("sqlite database %s: directory %s does not exist (helmstore creates the database file, not missing directories, except for the default location, DefaultSQLitePath)", path, dir)
	case err != nil:
		return fmt.Errorf("sqlite database %s: %w", path, err)
	case !fi.IsDir():
		return fmt.Errorf("sqlite database %s: %s is not a directory", path, dir)
	}
	return nil
}

// lockConnector makes modernc connections whose failures to take the write
// lock say so: SQLite's own "database is locked (5) (SQLITE_BUSY)", or a
// bare "context deadline exceeded" when the operation's deadline ended the
// wait, do not tell a user that another writer held the database, nor for
// how long this one waited.
type lockConnector struct{ sqldriver.Connector }

func (c lockConnector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if full, ok := conn.(sqliteConn); ok {
		return lockConn{full}, nil
	}
	return conn, nil
}

// sqliteConn is what modernc's connections implement and database/sql uses.
type sqliteConn interface {
	sqldriver.Conn
	sqldriver.ConnBeginTx
	sqldriver.ConnPrepareContext
	sqldriver.ExecerContext
	sqldriver.QueryerContext
	sqldriver.Pinger
	sqldriver.SessionResetter
	sqldriver.Validator
}

// lockConn explains a BeginTx (BEGIN IMMEDIATE: the wait for the write
// lock) that failed waiting. The wait itself is bounded by busy_timeout and
// by ctx — the operation's deadline — whichever ends first.
type lockConn struct{ sqliteConn }

func (c lockConn) BeginTx(ctx context.Context, opts sqldriver.TxOptions) (sqldriver.Tx, error) {
	start := time.Now()
	tx, err := c.sqliteConn.BeginTx(ctx, opts)
	if err != nil {
		return nil, lockWaitError(ctx, err, time.Since(start))
	}
	return tx, nil
}

// LockedError reports that another connection — another process, or another
// store on the same file — held the database's write lock for as long as an
// operation could wait. Err is the cause: SQLite's SQLITE_BUSY, or the
// context's error when the operation's deadline ended the wait.
type LockedError struct {
	Waited time.Duration
	Err    error
}

// Error says that another writer holds the lock and how long the call waited.
func (e *LockedError) Error() string {
	return fmt.Sprintf("the sqlite database is locked by another writer: gave up waiting for the write lock after %s: %v", e.Waited.Round(time.Millisecond), e.Err)
}

// Unwrap returns the cause, so errors.Is(err, context.DeadlineExceeded) and
// the SQLite error code still work.
func (e *LockedError) Unwrap() error { return e.Err }

func lockWaitError(ctx context.Context, err error, waited time.Duration) error {
	c := sqliteCode(err) & 0xff
	if c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED || (ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		return &LockedError{Waited: waited, Err: err}
	}
	return err
}
