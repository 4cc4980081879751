// Package sqlenv finds or starts the SQL servers the tests of the sql
// backends (and the benchmarks that compare with Helm's SQL driver) run
// against: PostgreSQL, MySQL or MariaDB, a MariaDB that accepts only TLS,
// and MySQL 8 in a container. Each test gets a database or schema of its
// own on the shared server.
package sqlenv

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"

	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// PostgresEnv names a PostgreSQL server for tests (a postgres:// URL).
const PostgresEnv = "HELMSTORE_TEST_POSTGRES"

const defaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

var (
	pgOnce sync.Once
	pgURL  string
	pgErr  error
)

// PostgresServer returns the URL of a reachable PostgreSQL server: the one in
// HELMSTORE_TEST_POSTGRES, else the machine's own on 127.0.0.1:5432, started
// with pg_ctlcluster if it is installed but stopped.
func PostgresServer(t testing.TB) string {
	t.Helper()
	pgOnce.Do(func() { pgURL, pgErr = findPostgres() })
	if pgErr != nil {
		testenv.Unavailable(t, "PostgreSQL", pgErr)
	}
	return pgURL
}

func findPostgres() (string, error) {
	if u := os.Getenv(PostgresEnv); u != "" {
		return u, pingPostgres(u)
	}
	if testenv.Reachable("127.0.0.1:5432") {
		return defaultPostgres, pingPostgres(defaultPostgres)
	}
	versions, _ := filepath.Glob("/etc/postgresql/*")
	if len(versions) == 0 {
		if dockerAvailable() {
			return postgresContainer()
		}
		return "", errors.New("nothing listens on 127.0.0.1:5432, no PostgreSQL cluster is installed, no Docker engine answers, and " + PostgresEnv + " is not set")
	}
	if err := testenv.Run("pg_ctlcluster", "--skip-systemctl-redirect", filepath.Base(versions[0]), "main", "start"); err != nil && !testenv.Reachable("127.0.0.1:5432") {
		return "", err
	}
	if !testenv.WaitReachable("127.0.0.1:5432", 30*time.Second) {
		return "", errors.New("started PostgreSQL but 127.0.0.1:5432 does not answer")
	}
	return defaultPostgres, pingPostgres(defaultPostgres)
}

func pingPostgres(u string) error {
	db, err := sql.Open("pgx", u)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return db.PingContext(ctx)
}

// Postgres returns a connection URL whose search_path is a fresh, empty
// schema, dropped when t ends. Tests in parallel packages never see each
// other's tables.
func Postgres(t testing.TB) string {
	t.Helper()
	u, drop := PostgresUnmanaged(t)
	t.Cleanup(drop)
	return u
}

// PostgresUnmanaged is Postgres for a schema that outlives t: the caller
// drops it by calling drop.
func PostgresUnmanaged(t testing.TB) (conn string, drop func()) {
	t.Helper()
	base := PostgresServer(t)
	schema := testenv.UniqueName("hs_")
	db, err := sql.Open("pgx", base)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		db.Close()
		t.Fatal(err)
	}
	drop = func() {
		db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), drop
}
