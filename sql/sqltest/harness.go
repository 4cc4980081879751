// Package sqltest holds what the tests of the SQL dialects share: the
// conformance harness of a SQL store, the Tamperer that edits its rows, and
// small releases to store. It is for tests only (it imports testing).
package sqltest

import (
	"context"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/drivertest"
)

// Open opens the store name at conn, failing t if it cannot.
func Open(t testing.TB, name, conn string, opts ...driver.Option) driver.Store {
	t.Helper()
	s, err := driver.Open(context.Background(), name, conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Harness returns the conformance harness for the SQL driver name (which
// the caller's imports register): a new database from conn for each Open,
// another pool over it for Reopen, and the row-editing Tamperer.
func Harness(name string, conn func(t testing.TB) string, opts ...driver.Option) drivertest.Harness {
	var mu sync.Mutex
	conns := map[driver.Store]string{}
	return drivertest.Harness{
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
		Tamper: Tamper,
	}
}
