package sqltest

import (
	"database/sql"
	"net/url"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// PostgresConfine returns the Confine of a PostgreSQL harness given
// postgres.NamespaceAccess (which this package cannot import: the dialect's
// own tests import it): a new login role (PostgresRole), confined by the
// statements access returns, run as the server's superuser; the connection
// string is conn as that role.
func PostgresConfine(access func(schema, role string, namespaces ...string) []string) func(t *testing.T, conn string, namespaces ...string) string {
	return func(t *testing.T, conn string, namespaces ...string) string {
		t.Helper()
		admin, schema, role, u := PostgresRole(t, conn, "hs_confined_")
		run(t, admin, access(schema, role, namespaces...)...)
		return u.String()
	}
}

// PostgresRole makes a login role named prefix and a unique suffix,
// dropped with what it owns and is granted when t ends, on the server of
// conn (a store's connection string). It returns a connection to the
// server as its superuser, the store's schema, the role, and conn's URL
// with the role as its user.
func PostgresRole(t *testing.T, conn, prefix string) (admin *sql.DB, schema, role string, u *url.URL) {
	t.Helper()
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	admin = adminDB(t, "pgx", sqlenv.PostgresServer(t))
	role = testenv.UniqueName(prefix)
	run(t, admin, "CREATE ROLE "+role+" LOGIN")
	t.Cleanup(func() {
		admin.Exec("DROP OWNED BY " + role)
		admin.Exec("DROP ROLE " + role)
	})
	schema = u.Query().Get("search_path")
	u.User = url.User(role)
	return admin, schema, role, u
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
