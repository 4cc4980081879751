// Package sqltest holds what the tests of the SQL dialects share: the
// conformance harness of a SQL store, the Tamperer that edits its rows, and
// small releases to store. It is for tests only (it imports testing).
package sqltest

import (
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/drivertest"
)

// Open opens the store name at conn, failing t if it cannot.
func Open(t testing.TB, name, conn string, opts ...driver.Option) driver.Store {
	t.Helper()
	return drivertest.Open(t, name, conn, opts...)
}

// Harness returns the conformance harness for the SQL driver name (which
// the caller's imports register): a new database from conn for each Open,
// another pool over it for Reopen, and the row-editing Tamperer.
func Harness(name string, conn func(t testing.TB) string, opts ...driver.Option) drivertest.Harness {
	h := drivertest.ConnectionStringHarness(name, conn, opts...)
	h.Tamper = Tamper
	return h
}
