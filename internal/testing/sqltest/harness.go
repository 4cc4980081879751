// Package sqltest holds what the tests of the SQL dialects (and drivertest's
// own test of broken stores) share: the conformance harness of a SQL store,
// the Tamperer that edits its rows, and small releases to store. It is for
// tests only (it imports testing).
package sqltest

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// Open opens the store name at conn, failing t if it cannot.
func Open(t testing.TB, name, conn string, opts ...helm3.Option) helm3.Store {
	t.Helper()
	s, err := helm3.Open(context.Background(), name, conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Harness returns the conformance harness for the SQL driver name (which
// the caller's imports register): a new database from conn for each Open,
// another pool over it for Reopen, the row-editing Tamperer, Wipe (every
// row deleted, the schema kept) and, for the dialects with a server,
// Proxied (the connection string with its host and port mapped) and Denied
// (PostgreSQL: a role without privileges on the store's schema; MySQL: a
// user the server does not know). SQLite checks no credentials.
func Harness(name string, conn func(t testing.TB) string, opts ...helm3.Option) drivertest.Harness {
	return HarnessOf(Connections(name, conn, opts...))
}

// Connections describes the SQL driver name for Harness: a new database
// from conn for each store, and for the dialects with a server how to map
// their addresses and deny their credentials. The caller may add Confine
// (PostgresConfine, MySQLConfine) before HarnessOf.
func Connections(name string, conn func(t testing.TB) string, opts ...helm3.Option) drivertest.ConnectionStrings {
	c := drivertest.ConnectionStrings{Name: name, New: conn, Options: opts}
	switch name {
	case "postgres":
		c.Rewrite, c.Deny = postgresAddrs, postgresDenied
	case "mysql":
		c.Rewrite, c.Deny = mysqlAddrs, mysqlDenied
	}
	return c
}

// HarnessOf returns the conformance harness of the SQL stores c describes,
// with the row-editing Tamperer and Wipe.
func HarnessOf(c drivertest.ConnectionStrings) drivertest.Harness {
	h := c.Harness()
	h.Tamper = Tamper
	h.Wipe = Wipe
	return h
}

// postgresAddrs maps the host and port of a postgres:// URL.
func postgresAddrs(conn string, proxy drivertest.ProxyFunc) (string, error) {
	u, err := url.Parse(conn)
	if err != nil {
		return "", err
	}
	if u.Port() == "" {
		return "", fmt.Errorf("the URL names no port")
	}
	u.Host = proxy(u.Host)
	return u.String(), nil
}

// mysqlTCP is the address of a go-sql-driver DSN: tcp(host:port).
var mysqlTCP = regexp.MustCompile(`tcp\(([^)]*)\)`)

// mysqlAddrs maps the tcp(host:port) address of a MySQL DSN.
func mysqlAddrs(conn string, proxy drivertest.ProxyFunc) (string, error) {
	m := mysqlTCP.FindStringSubmatchIndex(conn)
	if m == nil {
		return "", fmt.Errorf("the DSN names no tcp(host:port) address")
	}
	return conn[:m[2]] + proxy(conn[m[2]:m[3]]) + conn[m[3]:], nil
}

// Wipe deletes every row of the store's tables behind its back, as a
// restore of an empty database would; the schema stays.
func Wipe(t *testing.T, s helm3.Store) {
	b := BackendOf(t, s)
	for _, table := range sqlbackend.Tables() {
		if _, err := b.DB().ExecContext(context.Background(), "DELETE FROM "+table); err != nil {
			t.Fatalf("wipe %s: %v", table, err)
		}
	}
}
