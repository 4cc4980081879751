package mysql

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"net/url"
	"strings"
	"testing"

	gomysql "github.com/go-sql-driver/mysql"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/registry"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// withParam appends a go-sql-driver parameter to a DSN.
func withParam(dsn, kv string) string {
	if strings.Contains(dsn, "?") {
		return dsn + "&" + kv
	}
	return dsn + "?" + kv
}

// A user's DSN (or server default) with a non-strict sql_mode does not reach
// helmstore's sessions: a value too long for its column fails the write
// instead of being silently truncated.
func TestMySQLStrictModeOverridesDSN(t *testing.T) {
	dsn := withParam(sqlenv.MySQL(t), "sql_mode=%27%27")
	s, b := openStore(t, dsn)
	if err := s.Create(sqltest.Key("strict", 1), sqltest.Release("strict", "default", 1)); err != nil {
		t.Fatal(err)
	}
	var mode string
	if err := b.DB().QueryRow("SELECT @@SESSION.sql_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(mode, "STRICT_ALL_TABLES") {
		t.Errorf("session sql_mode %q is not strict", mode)
	}
	long := strings.Repeat("n", 64) // namespace is 63 bytes at most
	_, err := b.DB().Exec("INSERT INTO helmstore_labels (namespace, release_key, label_key, label_value) VALUES (?, ?, ?, ?)",
		long, sqltest.Key("strict", 1), "k", "v")
	if err == nil {
		var n int
		b.DB().QueryRow("SELECT COUNT(*) FROM helmstore_labels WHERE namespace = ?", long[:63]).Scan(&n)
		t.Fatalf("a 64-byte namespace was written (%d rows truncated to 63 bytes) instead of failing", n)
	}
	if _, err := b.DB().Exec("UPDATE helmstore_releases SET version = ? WHERE release_key = ?", int64(1)<<40, sqltest.Key("strict", 1)); err == nil {
		t.Fatal("a version out of range was clamped instead of failing")
	}
}

// thousandLabels returns 1,000 custom labels with keys of the maximal length
// (a 253-byte DNS prefix, '/', a 63-byte name) and 63-byte values.
func thousandLabels() map[string]string {
	labels := map[string]string{}
	for i := 0; i < 1000; i++ {
		seg := fmt.Sprintf("p%04d", i) + strings.Repeat("a", 58)
		prefix := seg + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 61)
		k := prefix + "/" + strings.Repeat("n", 63)
		if len(k) != 317 {
			panic(len(k))
		}
		labels[k] = strings.Repeat("v", 63)
	}
	return labels
}

// Labels JSON beyond TEXT's 64 KiB is stored whole.
func TestMySQLThousandMaximalLabels(t *testing.T) {
	s, _ := openStore(t, sqlenv.MySQL(t))
	r := sqltest.Release("many", "default", 1)
	r.Labels = thousandLabels()
	if err := s.Create(sqltest.Key("many", 1), r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(sqltest.Key("many", 1))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range r.Labels {
		if got.Labels[k] != v {
			t.Fatalf("label %q: got %q, want %q", k, got.Labels[k], v)
		}
	}
	for k := range got.Labels {
		if _, ok := r.Labels[k]; !ok && !driver.IsSystemLabel(k) {
			t.Fatalf("unexpected label %q", k)
		}
	}
}

// Namespaces, keys and names compare exactly: trailing spaces matter.
func TestMySQLNoPadSpace(t *testing.T) {
	s, b := openStore(t, sqlenv.MySQL(t))
	ctx := context.Background()
	r := sqltest.Release("pad", "default", 1)
	r.Namespace = "padns"
	if err := s.Namespace("padns").Create(sqltest.Key("pad", 1), r); err != nil {
		t.Fatal(err)
	}
	for _, q := range []driver.Query{
		{Namespace: "padns "},
		{Namespace: "padns", Key: sqltest.Key("pad", 1) + " "},
		{Namespace: "padns", Name: "pad "},
	} {
		hs, err := b.Heads(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(hs) != 0 {
			t.Errorf("%+v matched %q in %q", q, hs[0].Key, hs[0].Namespace)
		}
	}
	if hs, err := b.Heads(ctx, driver.Query{Namespace: "padns"}); err != nil || len(hs) != 1 {
		t.Fatalf("exact namespace: %d heads, %v", len(hs), err)
	}
	if _, _, err := b.Delete(ctx, "padns ", sqltest.Key("pad", 1), func(driver.Digest) bool { return false }); err == nil {
		t.Error("Delete in \"padns \" removed the release of \"padns\"")
	}
}

// A password holding '?', '@', '/' and ':' works in both connection string
// forms.
func TestMySQLPasswordSpecialCharacters(t *testing.T) {
	dsn := sqlenv.MySQL(t)
	base, err := gomysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	root, err := stdsql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	const user, pass = "hsq", "p?w@/:d"
	for _, host := range []string{"%", "localhost", "127.0.0.1"} {
		for _, stmt := range []string{
			fmt.Sprintf("CREATE USER IF NOT EXISTS '%s'@'%s' IDENTIFIED BY '%s'", user, host, pass),
			fmt.Sprintf("ALTER USER '%s'@'%s' IDENTIFIED BY '%s'", user, host, pass),
			fmt.Sprintf("GRANT ALL ON `%s`.* TO '%s'@'%s'", base.DBName, user, host),
		} {
			if _, err := root.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
	for _, conn := range []string{
		user + ":" + pass + "@tcp(" + base.Addr + ")/" + base.DBName,
		user + ":" + pass + "@tcp(" + base.Addr + ")/" + base.DBName + "?timeout=30s",
		"mysql://" + url.UserPassword(user, pass).String() + "@" + base.Addr + "/" + base.DBName,
		"mysql://" + url.UserPassword(user, pass).String() + "@" + base.Addr + "/" + base.DBName + "?timeout=30s",
	} {
		s, err := helm3.Open(context.Background(), "mysql", conn)
		if err != nil {
			t.Errorf("%s: %v", registry.Redact(conn), err)
			continue
		}
		if _, err := s.Stats(context.Background()); err != nil {
			t.Errorf("%s: %v", registry.Redact(conn), err)
		}
		s.Close()
	}
}
