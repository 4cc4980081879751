package sqlbackend_test

import (
	"context"
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// A part whose chunks are renumbered (or whose digest column is garbage)
// makes only the releases that use it corrupt: List and Query of the
// namespace still answer, Get names the release, and Delete removes it.
// Before, one such chunk failed every read of the namespace.
func TestRenumberedChunk(t *testing.T) {
	sqlBackends(t, func(t *testing.T, s helm3.Store, b *sqlbackend.Backend) {
		ctx := context.Background()
		good, bad := sqltest.SharedRelease("good", 1, 1), sqltest.SharedRelease("bad", 2, 2)
		good.Namespace, bad.Namespace = "default", "default"
		for _, r := range []*release.Release{good, bad} {
			if err := s.Create(sqltest.Key(r.Name, 1), r); err != nil {
				t.Fatal(err)
			}
		}
		var values string
		if err := b.DB().QueryRowContext(ctx, b.Dialect().Rebind("SELECT values_digest FROM helmstore_releases WHERE namespace = ? AND release_key = ?"), "default", sqltest.Key("bad", 1)).Scan(&values); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Exec(ctx, "UPDATE helmstore_part_chunks SET seq = seq + 7 WHERE namespace = ? AND digest = ?", "default", values); err != nil {
			t.Fatal(err)
		}
		rs, err := s.List(func(*release.Release) bool { return true })
		if err != nil || len(rs) != 1 || rs[0].Name != "good" {
			t.Fatalf("List with one renumbered chunk = %d releases, %v; want only the good one", len(rs), err)
		}
		if rs, err := s.Query(map[string]string{"owner": "helm"}); err != nil || len(rs) != 1 {
			t.Fatalf("Query with one renumbered chunk = %d releases, %v; want only the good one", len(rs), err)
		}
		if _, err := s.Get(sqltest.Key("bad", 1)); !errors.Is(err, helm3.ErrCorrupt) {
			t.Fatalf("Get of the release with a renumbered chunk = %v, want ErrCorrupt", err)
		}
		if _, err := s.Delete(sqltest.Key("bad", 1)); err != nil && !errors.Is(err, helm3.ErrCorrupt) {
			t.Fatalf("Delete: %v", err)
		}
		if _, err := s.Get(sqltest.Key("bad", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("after Delete: Get = %v, want ErrReleaseNotFound", err)
		}
		if _, err := s.Get(sqltest.Key("good", 1)); err != nil {
			t.Fatal(err)
		}
	})
}
