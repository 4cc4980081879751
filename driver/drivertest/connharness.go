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
// and opts. Tamper is left to the caller.
func ConnectionStringHarness(name string, conn func(t testing.TB) string, opts ...driver.Option) Harness {
	var mu sync.Mutex
	conns := map[driver.Store]string{}
	return Harness{
		Open: func(t *testing.T) driver.Store {
			c := conn(t)
			s := Open(t, name, c, opts...)
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
			return Open(t, name, c, opts...)
		},
	}
}
