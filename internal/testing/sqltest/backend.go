package sqltest

import (
	"database/sql"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/envelope"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// Backend is what the tests reach of the backend under a SQL store (the
// one sqlbackend.Open returns): the backend itself, its connection pool and
// its dialect.
type Backend interface {
	driver.Backend
	// DB returns the backend's connection pool.
	DB() *sql.DB
	// Dialect returns the backend's dialect (Open's copy, as Prepare
	// adapted it).
	Dialect() *sqlbackend.Dialect
}

// BackendOf returns the SQL backend under s, failing t if s is not a
// store of a SQL dialect.
func BackendOf(t testing.TB, s helm3.Store) Backend {
	t.Helper()
	b, ok := envelope.Under(engine.Of(s).Backend()).(Backend)
	if !ok {
		t.Fatalf("%T is not a SQL store", s)
	}
	return b
}
