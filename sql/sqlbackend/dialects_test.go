package sqlbackend_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
	_ "github.com/helmstore/helmstore/sql/mysql"
	_ "github.com/helmstore/helmstore/sql/postgres"
	"github.com/helmstore/helmstore/sql/sqlbackend"
	_ "github.com/helmstore/helmstore/sql/sqlite"
)

// The engine's tests run on every dialect, which they register above.

// dialects are the SQL backends the tests run on, each with a function
// that returns a new, empty database.
var dialects = []struct {
	name string
	conn func(t testing.TB) string
}{
	{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "helm.db") }},
	{"postgres", func(t testing.TB) string { sqlenv.PostgresServer(t); return sqlenv.Postgres(t) }},
	{"mysql", func(t testing.TB) string { sqlenv.MySQLServer(t); return sqlenv.MySQL(t) }},
}

// sqlBackends opens a fresh store of each SQL backend, giving the store and
// its backend to fn in a subtest.
func sqlBackends(t *testing.T, fn func(t *testing.T, s helm3.Store, b *sqlbackend.Backend), opts ...helm3.Option) {
	for _, c := range dialects {
		t.Run(c.name, func(t *testing.T) {
			s, err := helm3.Open(context.Background(), c.name, c.conn(t), opts...)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			fn(t, s, engine.Of(s).Backend().(*sqlbackend.Backend))
		})
	}
}

// openStore opens the store name at conn and returns it with its backend.
func openStore(t *testing.T, name, conn string, opts ...helm3.Option) (helm3.Store, *sqlbackend.Backend) {
	t.Helper()
	s, err := helm3.Open(context.Background(), name, conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, engine.Of(s).Backend().(*sqlbackend.Backend)
}
