package sqlbackend_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

func manyLabels(n int, value string) map[string]string {
	ls := make(map[string]string, n)
	for i := range n {
		ls[fmt.Sprintf("example.com/label-%04d", i)] = fmt.Sprintf("%s-%04d", value, i)
	}
	return ls
}

// A release with 1,000 custom labels (the engine's limit) is created, read,
// queried by all of them, updated to other labels and deleted on every SQL
// backend; and the backend itself stores and matches 2,000. Before, a query
// by many labels on PostgreSQL ran one EXISTS per label (7 s for 100
// labels, minutes for 1,000), and SQLite failed at 8,192 labels (4 values a
// label in one INSERT).
func TestManyLabels(t *testing.T) {
	const n = 1000
	// A bound, so a pathological query fails the test instead of running
	// for many minutes.
	sqlBackends(t, func(t *testing.T, s helm3.Store, b *sqlbackend.Backend) {
		ctx := context.Background()
		rls := sqltest.SharedRelease("labelled", 1, 1)
		rls.Namespace = "default"
		rls.Labels = manyLabels(n, "a")
		other := sqltest.SharedRelease("other", 2, 2)
		other.Namespace = "default"
		other.Labels = map[string]string{"example.com/label-0000": "a-0000"}
		for _, r := range []*release.Release{rls, other} {
			if err := s.Create(sqltest.Key(r.Name, 1), r); err != nil {
				t.Fatalf("create %s: %v", r.Name, err)
			}
		}
		got, err := s.Get(sqltest.Key("labelled", 1))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range rls.Labels {
			if got.Labels[k] != v {
				t.Fatalf("get: label %s = %q; want %q", k, got.Labels[k], v)
			}
		}
		query := func(labels map[string]string) ([]*release.Release, error) {
			q := maps.Clone(labels)
			q["owner"] = "helm"
			return s.Query(q)
		}
		rs, err := query(rls.Labels)
		if err != nil || len(rs) != 1 || rs[0].Name != "labelled" {
			t.Fatalf("query by all %d labels: %d releases, %v; want the labelled one", n, len(rs), err)
		}
		wrong := maps.Clone(rls.Labels)
		wrong["example.com/label-0500"] = "wrong"
		if rs, err := query(wrong); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("query by %d labels and one wrong value: %d releases, %v; want ErrReleaseNotFound", n-1, len(rs), err)
		}

		// Update to other values of the same keys, and half as many.
		rls.Labels = manyLabels(n/2, "b")
		if err := s.Update(sqltest.Key("labelled", 1), rls); err != nil {
			t.Fatal(err)
		}
		if rs, err := query(rls.Labels); err != nil || len(rs) != 1 || rs[0].Name != "labelled" || len(rs[0].Labels) < n/2 {
			t.Fatalf("query by the updated labels: %d releases, %v", len(rs), err)
		}
		if _, err := query(manyLabels(n, "a")); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("query by the labels before the update: %v; want ErrReleaseNotFound", err)
		}
		if rs, err := query(map[string]string{"example.com/label-0000": "a-0000"}); err != nil || len(rs) != 1 || rs[0].Name != "other" {
			t.Fatalf("query by the other release's label: %d releases, %v", len(rs), err)
		}

		// The backend holds and matches 2,000 labels.
		hs, err := b.Heads(ctx, driver.Query{Namespace: "default", Key: sqltest.Key("labelled", 1)})
		if err != nil || len(hs) != 1 {
			t.Fatalf("heads: %d, %v", len(hs), err)
		}
		h := hs[0]
		h.Labels = manyLabels(2*n, "c")
		if err := b.Update(ctx, h, nil); err != nil {
			t.Fatalf("backend update to %d labels: %v", 2*n, err)
		}
		if hs, err := b.Heads(ctx, driver.Query{Namespace: "default", Labels: h.Labels}); err != nil || len(hs) != 1 || hs[0].Key != sqltest.Key("labelled", 1) {
			t.Fatalf("backend query by %d labels: %d heads, %v", 2*n, len(hs), err)
		}
		wrong = maps.Clone(h.Labels)
		wrong["example.com/label-1999"] = "wrong"
		if hs, err := b.Heads(ctx, driver.Query{Labels: wrong}); err != nil || len(hs) != 0 {
			t.Fatalf("backend query by %d labels and one wrong value: %d heads, %v", 2*n-1, len(hs), err)
		}

		if _, err := s.Delete(sqltest.Key("labelled", 1)); err != nil {
			t.Fatal(err)
		}
		var left int
		if err := b.DB().QueryRowContext(ctx, b.Dialect().Rebind("SELECT COUNT(*) FROM helmstore_labels WHERE release_key = ?"), sqltest.Key("labelled", 1)).Scan(&left); err != nil {
			t.Fatal(err)
		}
		if left != 0 {
			t.Fatalf("%d label rows left after Delete", left)
		}
	}, helm3.WithTimeout(time.Minute))
}
