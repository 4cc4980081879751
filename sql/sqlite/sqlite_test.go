package sqlite

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
)

func openStore(t *testing.T, path string, opts ...helm3.Option) helm3.Store {
	t.Helper()
	s := sqltest.Open(t, "sqlite", path, opts...)
	t.Cleanup(func() { s.Close() })
	return s
}

// A run as root leaves the migration lock file to the database's owner, with
// the database's mode, whether it creates the lock file or finds one.
func TestSQLiteLockFileFollowsDatabaseOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to own files as another user")
	}
	const uid, gid = 65534, 65534
	path := filepath.Join(t.TempDir(), "helm.db")
	lock := path + ".migrate-lock"
	openStore(t, path).Close()
	check := func(when string) {
		t.Helper()
		fi, err := os.Stat(lock)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != uid || st.Gid != gid || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: lock file owned by %d:%d with mode %v, want %d:%d and %v like the database", when, st.Uid, st.Gid, fi.Mode().Perm(), uid, gid, os.FileMode(0o640))
		}
	}
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Chown(f, uid, gid); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if err := os.Chmod(f, 0o640); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	// The lock file left by the first open (as root) is repaired...
	openStore(t, path).Close()
	check("existing lock file")
	// ... and a new one is made like the database.
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	openStore(t, path).Close()
	check("new lock file")
}

// With HOME unset the default database path is still absolute, not relative
// to the working directory.
func TestDefaultSQLitePathWithoutHome(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("HELM_DATA_HOME", "")
	for _, v := range []string{"HOME", "XDG_DATA_HOME", "HELM_DATA_HOME"} {
		os.Unsetenv(v)
	}
	p := DefaultPath()
	if !filepath.IsAbs(p) {
		t.Fatalf("DefaultPath() = %q, not absolute", p)
	}
	_, path, _, err := dsnOf("")
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(path) {
		t.Fatalf("the default store is at %q, not absolute", path)
	}
	// A relative HELM_DATA_HOME is the user's choice, made absolute.
	t.Setenv("HELM_DATA_HOME", "data")
	wd, _ := os.Getwd()
	if p := DefaultPath(); p != filepath.Join(wd, "data", "helmstore.db") {
		t.Fatalf("with HELM_DATA_HOME=data: %q", p)
	}
}

// A store whose database another writer holds fails within the operation's
// deadline, saying that the database is locked.
func TestSQLiteLockedByAnotherWriter(t *testing.T) {
	path := filepath.Join(t.TempDir(), "helm.db")
	s := openStore(t, path, helm3.WithTimeout(2*time.Second))
	other, err := stdsql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx := context.Background()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")
	err = s.Create(sqltest.Key("locked", 1), sqltest.Release("locked", "default", 1))
	if err == nil {
		t.Fatal("Create succeeded while another writer held the database")
	}
	if !strings.Contains(err.Error(), "locked by another writer") {
		t.Fatalf("the error does not say the database is locked: %v", err)
	}
	t.Log(err)
}

// sqliteChildEnv makes the test binary, run by TestSQLiteOwnerOpensAfterRootRun
// as another user, open the store at its value and exit (see init).
const sqliteChildEnv = "HELMSTORE_TEST_SQLITE_CHILD"

// A test binary started with sqliteChildEnv set runs sqliteChild instead of
// the tests.
func init() {
	if path := os.Getenv(sqliteChildEnv); path != "" {
		if err := sqliteChild(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// sqliteChild opens the store at path and creates a revision of "child".
func sqliteChild(path string) error {
	v, err := strconv.Atoi(os.Getenv(sqliteChildEnv + "_VERSION"))
	if err != nil {
		return err
	}
	s, err := helm3.Open(context.Background(), "sqlite", path)
	if err != nil {
		return err
	}
	defer s.Close()
	return s.Create(sqltest.Key("child", v), sqltest.Release("child", "default", v))
}

// A database its owner made stays usable by its owner after a run as root:
// the run does not leave files only root can open.
func TestSQLiteOwnerOpensAfterRootRun(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to run a process as another user")
	}
	const uid, gid = 65534, 65534
	top := t.TempDir()
	dir := filepath.Join(top, "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{filepath.Dir(top), top} {
		if err := os.Chmod(d, 0o755); err != nil && filepath.Dir(top) != d {
			t.Fatal(err)
		}
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	// The test binary, where the other user may run it.
	bin := filepath.Join(top, "sql.test")
	self, err := os.Open(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(out, self)
	self.Close()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "helm.db")
	asOwner := func(version int, step string) {
		t.Helper()
		cmd := exec.Command(bin) // runs sqliteChild (see init), no test
		cmd.Env = append(os.Environ(), sqliteChildEnv+"="+path, sqliteChildEnv+"_VERSION="+strconv.Itoa(version), "HOME="+dir)
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: the database's owner cannot use the store: %v\n%s", step, err, out)
		}
	}
	asOwner(1, "creating the database")
	// A lock file that is not there (cleaned up, or from before there was
	// one) is made by the run as root.
	if err := os.Remove(path + ".migrate-lock"); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, path)
	if err := s.Create(sqltest.Key("root", 1), sqltest.Release("root", "default", 1)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	asOwner(2, "after a run as root")
}
