package drivertest

import (
	"context"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/driver"
)

// Open opens the registered driver name at conn (driver.Open), failing t
// if it cannot.
func Open(t testing.TB, name, conn string, opts ...driver.Option) driver.Store {
	t.Helper()
	s, err := driver.Open(context.Background(), name, conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// ConnectionStringHarness returns a Harness for the registered driver name
// whose Open opens a store on a new connection string from conn (each must
// lead to a new, empty store: a database, a key prefix of its own) and whose
// Reopen opens the same connection string again, with its own connections
// and opts. Tamper, Proxied and Wipe are left to the caller (see
// ProxiedConnectionStringHarness for Proxied).
func ConnectionStringHarness(name string, conn func(t testing.TB) string, opts ...driver.Option) Harness {
	return ProxiedConnectionStringHarness(name, conn, nil, opts...)
}

// RewriteAddrs returns the connection string conn with every network
// address ("host:port") a store opened on it would dial replaced by
// proxy(address), or an error if conn names an address it cannot map.
type RewriteAddrs func(conn string, proxy ProxyFunc) (string, error)

// ProxiedConnectionStringHarness is ConnectionStringHarness with Proxied
// set, if rewrite is not nil: it opens the store's connection string with
// its addresses rewritten.
func ProxiedConnectionStringHarness(name string, conn func(t testing.TB) string, rewrite RewriteAddrs, opts ...driver.Option) Harness {
	var mu sync.Mutex
	conns := map[driver.Store]string{}
	connOf := func(t *testing.T, s driver.Store) string {
		mu.Lock()
		c, ok := conns[s]
		mu.Unlock()
		if !ok {
			t.Fatal("a store Open did not return")
		}
		return c
	}
	h := Harness{
		Open: func(t *testing.T) driver.Store {
			c := conn(t)
			s := Open(t, name, c, opts...)
			mu.Lock()
			conns[s] = c
			mu.Unlock()
			return s
		},
		Reopen: func(t *testing.T, s driver.Store, opts ...driver.Option) driver.Store {
			return Open(t, name, connOf(t, s), opts...)
		},
	}
	if rewrite != nil {
		h.Proxied = func(t *testing.T, s driver.Store, proxy ProxyFunc, opts ...driver.Option) (driver.Store, error) {
			c, err := rewrite(connOf(t, s), proxy)
			if err != nil {
				t.Fatalf("map the addresses of the connection string: %v", err)
			}
			return driver.Open(context.Background(), name, c, opts...)
		}
	}
	return h
}
