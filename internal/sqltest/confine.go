package sqltest

import (
	"database/sql"
	"net/url"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/helmstore/helmstore/internal/testenv"
)

// PostgresConfine returns the Confine of a PostgreSQL harness given
// postgres.NamespaceAccess (which this package cannot import: the dialect's
// own tests import it): a new login role, confined by the statements
// access returns, run as conn's user (the server's superuser in the
// tests); the connection string is
// conn as that role. The role, its policies and grants are dropped when t
// ends.
func PostgresConfine(access func(schema, role string, namespaces ...string) []string) func(t *testing.T, conn string, namespaces ...string) string {
	return func(t *testing.T, conn string, namespaces ...string) string {
		t.Helper()
		u, err := url.Parse(conn)
		if err != nil {
			t.Fatal(err)
		}
		role := testenv.UniqueName("hs_confined_")
		admin := adminDB(t, "pgx", conn) // the server's superuser, as conn is
		run(t, admin, "CREATE ROLE "+role+" LOGIN")
		t.Cleanup(func() {
			admin.Exec("DROP OWNED BY " + role)
			admin.Exec("DROP ROLE " + role)
		})
		run(t, admin, access(u.Query().Get("search_path"), role, namespaces...)...)
		u.User = url.User(role)
		return u.String()
	}
}

// MySQLConfine returns the Confine of a MySQL harness given
// mysql.NamespaceAccess: a new account (no password) confined by the
// statements access returns, run as conn's user (the server's root in the
// tests), to a new database
// of views; the connection string is conn as that account on those views.
// The account and the views are dropped when t ends.
func MySQLConfine(access func(database, views, user string, namespaces ...string) []string) func(t *testing.T, conn string, namespaces ...string) string {
	return func(t *testing.T, conn string, namespaces ...string) string {
		t.Helper()
		cfg, err := mysql.ParseDSN(conn)
		if err != nil {
			t.Fatal(err)
		}
		user, views := testenv.UniqueName("hs_confined_"), testenv.UniqueName("hs_views_")
		root := *cfg // the server's root, as conn is
		root.DBName = ""
		admin := adminDB(t, "mysql", root.FormatDSN())
		run(t, admin, "CREATE USER '"+user+"'@'%'")
		t.Cleanup(func() {
			admin.Exec("DROP USER '" + user + "'@'%'")
			admin.Exec("DROP DATABASE IF EXISTS " + views)
		})
		run(t, admin, access(cfg.DBName, views, user, namespaces...)...)
		cfg.User, cfg.Passwd, cfg.DBName = user, "", views
		return cfg.FormatDSN()
	}
}

// adminDB opens the server's administrative connection dsn, closed when t
// ends (after the cleanups registered later, which use it).
func adminDB(t *testing.T, driverName, dsn string) *sql.DB {
	t.Helper()
	db, err := sql.Open(driverName, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// run runs each statement on db, failing t at the first that fails.
func run(t *testing.T, db *sql.DB, statements ...string) {
	t.Helper()
	for _, q := range statements {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
