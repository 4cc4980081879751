package sql_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/drivertest"
	"github.com/helmstore/helmstore/internal/testenv"
	_ "github.com/helmstore/helmstore/sql"
)

func openStore(t *testing.T, name, conn string, opts ...driver.Option) driver.Store {
	t.Helper()
	s, err := driver.Open(context.Background(), name, conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformanceSQLite(t *testing.T) {
	drivertest.Run(t, drivertest.Harness{Open: func(t *testing.T) driver.Store {
		return openStore(t, "sqlite", filepath.Join(t.TempDir(), "helm.db"))
	}})
}

func TestConformancePostgres(t *testing.T) {
	testenv.PostgresServer(t)
	drivertest.Run(t, drivertest.Harness{Open: func(t *testing.T) driver.Store {
		return openStore(t, "postgres", testenv.Postgres(t))
	}})
}

func TestConformanceMySQL(t *testing.T) {
	testenv.MySQLServer(t)
	drivertest.Run(t, drivertest.Harness{Open: func(t *testing.T) driver.Store {
		return openStore(t, "mysql", testenv.MySQL(t))
	}})
}

// MySQL 8 differs from MariaDB (no RETURNING, other collations and
// defaults); it runs where a Docker engine does, or at HELMSTORE_TEST_MYSQL8.
func TestConformanceMySQL8(t *testing.T) {
	testenv.MySQL8(t)
	drivertest.Run(t, drivertest.Harness{Open: func(t *testing.T) driver.Store {
		return openStore(t, "mysql", testenv.MySQL8(t))
	}})
}
