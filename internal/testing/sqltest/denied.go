package sqltest

import (
	"database/sql"
	"errors"
	"net/url"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// deniedRole is the PostgreSQL role postgresDenied connects as: it may log
// in (the test server trusts local connections) and holds no privilege on
// any store's schema.
const deniedRole = "helmstore_denied"

// postgresDenied returns conn (a postgres:// URL) as deniedRole, creating
// the role if it does not exist.
func postgresDenied(t *testing.T, conn string) string {
	t.Helper()
	db, err := sql.Open("pgx", sqlenv.PostgresServer(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow("SELECT count(*) FROM pg_roles WHERE rolname = $1", deniedRole).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		if _, err := db.Exec("CREATE ROLE " + deniedRole + " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE"); err != nil {
			var pe *pgconn.PgError
			// Another test process made it meanwhile.
			if !errors.As(err, &pe) || pe.Code != "42710" {
				t.Fatalf("create role %s: %v", deniedRole, err)
			}
		}
	}
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(deniedRole)
	return u.String()
}

// mysqlDenied returns conn (a go-sql-driver DSN) with a user and password
// the server does not know.
func mysqlDenied(t *testing.T, conn string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(conn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.User, cfg.Passwd = "helmstore_nobody", "not-the-password"
	return cfg.FormatDSN()
}
