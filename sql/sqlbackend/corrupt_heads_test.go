package sqlbackend_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/releasecheck"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// A head row whose labels column is not JSON, whose digest is not hex, or
// whose body row is missing, no longer fails every read of its namespace: the backend returns it with
// Err (corrupt, naming the release) next to the readable ones, and Delete
// removes it with its labels. Before, Heads failed as a whole, so List of
// the namespace failed and the release could not be deleted.
func TestGarbledHeadRow(t *testing.T) {
	for _, c := range []struct {
		name, garble string
		// partsLeft: after deleting the bad release, the parts left are
		// exactly those the good one references (not so when a digest is
		// garbled: the part it named keeps the reference).
		partsLeft bool
	}{
		{"labels", "UPDATE helmstore_releases SET labels = '{not json' WHERE namespace = ? AND release_key = ?", true},
		{"digest", "UPDATE helmstore_releases SET values_digest = 'not-a-hex-digest' WHERE namespace = ? AND release_key = ?", false},
		{"body", "DELETE FROM helmstore_bodies WHERE namespace = ? AND release_key = ?", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sqlBackends(t, func(t *testing.T, s helm3.Store, b *sqlbackend.Backend) {
				ctx := context.Background()
				good, bad := sqltest.SharedRelease("good", 1, 1), sqltest.SharedRelease("bad", 2, 2)
				good.Namespace, bad.Namespace = "default", "default"
				bad.Labels = map[string]string{"team": "a"}
				for _, r := range []*release.Release{good, bad} {
					if err := s.Create(sqltest.Key(r.Name, 1), r); err != nil {
						t.Fatal(err)
					}
				}
				if _, err := b.Exec(ctx, c.garble, "default", sqltest.Key("bad", 1)); err != nil {
					t.Fatal(err)
				}

				hs, err := b.Heads(ctx, driver.Query{Namespace: "default"})
				if err != nil {
					t.Fatalf("one garbled row failed the whole read: %v", err)
				}
				var sawGood, sawBad bool
				for _, h := range hs {
					switch h.Key {
					case sqltest.Key("good", 1):
						sawGood = true
						if h.Err != nil {
							t.Fatalf("the good head has Err %v", h.Err)
						}
					case sqltest.Key("bad", 1):
						sawBad = true
						if h.Namespace != "default" || !errors.Is(h.Err, driver.ErrCorrupt) || !strings.Contains(h.Err.Error(), sqltest.Key("bad", 1)) {
							t.Fatalf("the garbled head: namespace %q, Err %v; want ErrCorrupt naming the release", h.Namespace, h.Err)
						}
					}
				}
				if !sawGood || !sawBad || len(hs) != 2 {
					t.Fatalf("heads: %d (good %v, bad %v); want both", len(hs), sawGood, sawBad)
				}
				releasecheck.WantListed(t, s, "good")

				h, _, err := b.Delete(ctx, "default", sqltest.Key("bad", 1), func(driver.Digest) bool { return false })
				if err != nil {
					t.Fatalf("delete of the garbled release: %v", err)
				}
				if h.Key != sqltest.Key("bad", 1) || h.Err == nil {
					t.Fatalf("delete returned head %q with Err %v", h.Key, h.Err)
				}
				for _, table := range []string{"helmstore_releases", "helmstore_bodies", "helmstore_labels"} {
					var n int
					if err := b.DB().QueryRowContext(ctx, b.Dialect().Rebind("SELECT COUNT(*) FROM "+table+" WHERE namespace = ? AND release_key = ?"), "default", sqltest.Key("bad", 1)).Scan(&n); err != nil {
						t.Fatal(err)
					}
					if n != 0 {
						t.Fatalf("%d rows of the deleted release left in %s", n, table)
					}
				}
				if _, _, err := b.Delete(ctx, "default", sqltest.Key("bad", 1), func(driver.Digest) bool { return false }); !errors.Is(err, driver.ErrReleaseNotFound) {
					t.Fatalf("second delete: %v; want ErrReleaseNotFound", err)
				}
				got, err := s.Get(sqltest.Key("good", 1))
				if err != nil || got.Manifest != good.Manifest {
					t.Fatalf("the good release after deleting the bad one: %v", err)
				}
				if c.partsLeft {
					st, err := s.Stats(ctx)
					if err != nil {
						t.Fatal(err)
					}
					if st.Releases != 1 || st.Parts["chart"] != 1 || st.Parts["values"] != 1 || st.Parts["manifest"] != 1 {
						t.Fatalf("stats after deleting the bad release: %+v; want the good one's release and parts", st)
					}
				}
			})
		})
	}
}

// A body row whose head row is gone (a hand at the database, a partial
// restore) is not a release: the release is not found, and creating it
// again replaces the stale body rather than failing as a duplicate.
func TestOrphanBodyRow(t *testing.T) {
	sqlBackends(t, func(t *testing.T, s helm3.Store, b *sqlbackend.Backend) {
		ctx := context.Background()
		old := sqltest.Release("app", "default", 1)
		old.Info.Description = "the old one"
		if err := s.Create(sqltest.Key("app", 1), old); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Exec(ctx, "DELETE FROM helmstore_releases WHERE namespace = ? AND release_key = ?", "default", sqltest.Key("app", 1)); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(sqltest.Key("app", 1)); err != helm3.ErrReleaseNotFound {
			t.Fatalf("Get with only a body row: %v; want ErrReleaseNotFound", err)
		}
		r := sqltest.Release("app", "default", 1)
		r.Info.Description = "the new one"
		if err := s.Create(sqltest.Key("app", 1), r); err != nil {
			t.Fatalf("Create over an orphan body row: %v", err)
		}
		got, err := s.Get(sqltest.Key("app", 1))
		if err != nil || got.Info.Description != "the new one" {
			t.Fatalf("Get after Create: %v, %+v; want the new release", err, got)
		}
		var n int
		if err := b.DB().QueryRowContext(ctx, b.Dialect().Rebind("SELECT COUNT(*) FROM helmstore_bodies WHERE namespace = ?"), "default").Scan(&n); err != nil || n != 1 {
			t.Fatalf("%d body rows (%v); want 1", n, err)
		}
	})
}
