package sqlite

import (
	stdsql "database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
)

// Corrupted stored bytes give a clear error naming the release and part;
// List skips (and logs) the corrupted release, as Helm's drivers do.
func TestCorruptedBytes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "helm.db")
	var logged []string
	var mu sync.Mutex
	s := sqltest.Open(t, "sqlite", path, helm3.WithCacheBytes(0), helm3.WithLog(func(f string, v ...interface{}) {
		mu.Lock()
		logged = append(logged, fmt.Sprintf(f, v...))
		mu.Unlock()
	}))
	defer s.Close()
	for _, n := range []string{"good", "bad"} {
		if err := s.Create(sqltest.Key(n, 1), sqltest.Release(n, "default", 1)); err != nil {
			t.Fatal(err)
		}
	}
	db, err := stdsql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var values string
	if err := db.QueryRow("SELECT values_digest FROM helmstore_releases WHERE release_key = ?", sqltest.Key("bad", 1)).Scan(&values); err != nil {
		t.Fatal(err)
	}
	corrupt := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what, wantIn string) {
		t.Helper()
		_, err := s.Get(sqltest.Key("bad", 1))
		if err == nil || !strings.Contains(err.Error(), sqltest.Key("bad", 1)) || !strings.Contains(err.Error(), wantIn) {
			t.Fatalf("%s: got %v; want an error naming the release and %q", what, err, wantIn)
		}
		if errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("%s reported as not found", what)
		}
		rs, err := s.List(func(*release.Release) bool { return true })
		if err != nil || len(rs) != 1 || rs[0].Name != "good" {
			t.Fatalf("%s: list returned %d releases, %v; want only the good one", what, len(rs), err)
		}
	}

	corrupt("UPDATE helmstore_part_chunks SET data = ? WHERE digest = ?", []byte{1, 0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0}, values)
	check("a garbled part", values)
	_, err = s.Get(sqltest.Key("bad", 1))
	if !errors.Is(err, helm3.ErrCorrupt) {
		t.Fatalf("a garbled part is not ErrCorrupt: %v", err)
	}
	corrupt("UPDATE helmstore_part_chunks SET data = ? WHERE digest = ?", []byte("\x00{\"other\":\"values\"}"), values)
	check("a part whose bytes do not match its digest", values)
	corrupt("DELETE FROM helmstore_part_chunks WHERE digest = ?", values)
	check("a missing part", "missing")
	corrupt("UPDATE helmstore_releases SET values_digest = '' WHERE release_key = ?", sqltest.Key("bad", 1))
	corrupt("UPDATE helmstore_bodies SET body = ? WHERE release_key = ?", []byte{7, 7, 7}, sqltest.Key("bad", 1))
	check("a garbled head", "corrupted")
	corrupt("UPDATE helmstore_releases SET labels = '{not json' WHERE release_key = ?", sqltest.Key("bad", 1))
	if _, err := s.Get(sqltest.Key("bad", 1)); err == nil || !strings.Contains(err.Error(), sqltest.Key("bad", 1)) {
		t.Fatalf("garbled labels: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logged) == 0 || !strings.Contains(strings.Join(logged, "\n"), sqltest.Key("bad", 1)) {
		t.Fatalf("skipping a corrupted release in List was not logged: %q", logged)
	}
}
