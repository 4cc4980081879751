package sqlbackend_test

import (
	"context"
	"testing"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// A part whose helmstore_parts row was lost while its chunks stayed, or
// whose refs says no release uses it, looks new to a Create that carries
// it, whose chunks then meet the stored ones: that Create, by a store that
// has read nothing, succeeds and counts the part's references again (the
// releases that use it, the new one included), so deleting the new
// release leaves the part to the others, and deleting them all removes it.
func TestHealedPartIsCounted(t *testing.T) {
	for _, damage := range []struct{ name, stmt string }{
		{"RowLost", "DELETE FROM helmstore_parts WHERE namespace = ? AND digest = ?"},
		{"RefsZero", "UPDATE helmstore_parts SET refs = 0 WHERE namespace = ? AND digest = ?"},
	} {
		t.Run(damage.name, func(t *testing.T) {
			sqlBackends(t, func(t *testing.T, s helm3.Store, b *sqlbackend.Backend) {
				ctx := context.Background()
				count := func(q, chart string) (n int) {
					t.Helper()
					if err := b.DB().QueryRowContext(ctx, b.Dialect().Rebind(q), "storm", chart).Scan(&n); err != nil {
						t.Fatal(err)
					}
					return n
				}
				st := s.Namespace("storm")
				for i, n := range []string{"alpha", "beta"} {
					if err := st.Create(sqltest.Key(n, 1), sqltest.SharedRelease(n, i, i)); err != nil {
						t.Fatal(err)
					}
				}
				var chart string
				if err := b.DB().QueryRowContext(ctx, b.Dialect().Rebind("SELECT chart_digest FROM helmstore_releases WHERE namespace = ? AND release_key = ?"),
					"storm", sqltest.Key("alpha", 1)).Scan(&chart); err != nil {
					t.Fatal(err)
				}
				if _, err := b.Exec(ctx, damage.stmt, "storm", chart); err != nil {
					t.Fatal(err)
				}
				if err := st.Create(sqltest.Key("gamma", 1), sqltest.SharedRelease("gamma", 2, 2)); err != nil {
					t.Fatalf("Create over the damaged part: %v", err)
				}
				if n := count("SELECT refs FROM helmstore_parts WHERE namespace = ? AND digest = ?", chart); n != 3 {
					t.Fatalf("the part's refs after the Create = %d; want 3 (alpha, beta, gamma)", n)
				}
				if _, err := st.Delete(sqltest.Key("gamma", 1)); err != nil {
					t.Fatal(err)
				}
				for _, n := range []string{"alpha", "beta"} {
					if r, err := st.Get(sqltest.Key(n, 1)); err != nil || r.Chart == nil {
						t.Fatalf("Get of %s after gamma's Delete: %v", n, err)
					}
				}
				for _, n := range []string{"alpha", "beta"} {
					if _, err := st.Delete(sqltest.Key(n, 1)); err != nil {
						t.Fatal(err)
					}
				}
				if left := count("SELECT COUNT(*) FROM helmstore_part_chunks WHERE namespace = ? AND digest = ?", chart); left != 0 {
					t.Fatalf("%d chunks of the part left once every release using it was deleted", left)
				}
			}, helm3.WithCacheBytes(0))
		})
	}
}
