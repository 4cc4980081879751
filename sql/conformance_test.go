package sql_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/drivertest"
	"github.com/helmstore/helmstore/internal/testenv"
	"github.com/helmstore/helmstore/sql"
)

func openStore(t *testing.T, name, conn string, opts ...driver.Option) driver.Store {
	t.Helper()
	s, err := driver.Open(context.Background(), name, conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// harness returns the conformance harness for the named SQL driver: a new
// database from conn for each Open, another pool over it for Reopen, and the
// row-editing Tamperer.
func harness(name string, conn func(t testing.TB) string, opts ...driver.Option) drivertest.Harness {
	var mu sync.Mutex
	conns := map[driver.Store]string{}
	return drivertest.Harness{
		Open: func(t *testing.T) driver.Store {
			c := conn(t)
			s := openStore(t, name, c, opts...)
			mu.Lock()
			conns[s] = c
			mu.Unlock()
			return s
		},
		Reopen: func(t *testing.T, s driver.Store, opts ...driver.Option) driver.Store {
			mu.Lock()
			c, ok := conns[s]
			mu.Unlock()
			if !ok {
				t.Fatal("Reopen of a store Open did not return")
			}
			return openStore(t, name, c, opts...)
		},
		Tamper: sql.Tamper,
	}
}

func TestConformanceSQLite(t *testing.T) {
	drivertest.Run(t, harness("sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "helm.db") }))
}

// Without a part cache every read decodes parts for itself alone and the
// engine builds releases on their bytes without copying them (the path of
// a CLI's cold reads): the whole suite again, NoAliasing included.
func TestConformanceSQLiteNoCache(t *testing.T) {
	drivertest.Run(t, harness("sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "helm.db") }, driver.WithCacheBytes(0)))
}

func TestConformancePostgres(t *testing.T) {
	testenv.PostgresServer(t)
	drivertest.Run(t, harness("postgres", testenv.Postgres))
}

func TestConformanceMySQL(t *testing.T) {
	testenv.MySQLServer(t)
	drivertest.Run(t, harness("mysql", testenv.MySQL))
}

// MySQL 8 differs from MariaDB (no RETURNING, other collations and
// defaults); it runs where a Docker engine does, or at HELMSTORE_TEST_MYSQL8.
func TestConformanceMySQL8(t *testing.T) {
	testenv.MySQL8(t)
	drivertest.Run(t, harness("mysql", testenv.MySQL8))
}
