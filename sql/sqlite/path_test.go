package sqlite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/helm3"
)

// A path whose directory does not exist (a typo) is an error naming the
// path, not a new empty store in new directories.
func TestSQLiteMissingDirectoryIsAnError(t *testing.T) {
	top := t.TempDir()
	for _, conn := range []string{
		filepath.Join(top, "tpyo", "helm.db"),
		"file:" + filepath.Join(top, "tpyo", "deeper", "helm.db") + "?_pragma=synchronous(NORMAL)",
	} {
		s, err := helm3.Open(context.Background(), "sqlite", conn)
		if err == nil {
			s.Close()
			t.Fatalf("%s: opened a store in a directory that did not exist", conn)
		}
		path := strings.TrimPrefix(strings.Split(conn, "?")[0], "file:")
		want := "sqlite database " + path + ": directory " + filepath.Dir(path) + " does not exist"
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: error %q does not say %q", conn, err, want)
		}
		var oe *helm3.OpenError
		if !errors.As(err, &oe) {
			t.Fatalf("%s: %v is not an *OpenError", conn, err)
		}
	}
	if _, err := os.Stat(filepath.Join(top, "tpyo")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the missing directory was created: %v", err)
	}

	// A file where the directory should be.
	file := filepath.Join(top, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := helm3.Open(context.Background(), "sqlite", filepath.Join(file, "helm.db")); err == nil {
		s.Close()
		t.Fatal("opened a store under a file")
	} else if !strings.Contains(err.Error(), file+" is not a directory") {
		t.Fatalf("under a file: %v", err)
	}

	// The file itself is created in an existing directory.
	p := filepath.Join(top, "helm.db")
	s, err := helm3.Open(context.Background(), "sqlite", p)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(p); err != nil {
		t.Fatal(err)
	}
}

// The default location's directories (Helm's data directory) are created,
// whether the path is given or left empty.
func TestSQLiteDefaultLocationCreatesDirectories(t *testing.T) {
	for _, given := range []bool{false, true} {
		data := filepath.Join(t.TempDir(), "helm", "data")
		t.Setenv("HELM_DATA_HOME", data)
		conn := ""
		if given {
			conn = DefaultPath()
		}
		s, err := helm3.Open(context.Background(), "sqlite", conn)
		if err != nil {
			t.Fatalf("conn %q: %v", conn, err)
		}
		s.Close()
		if _, err := os.Stat(filepath.Join(data, "helmstore.db")); err != nil {
			t.Fatalf("conn %q: %v", conn, err)
		}
	}
}
