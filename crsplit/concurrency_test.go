package crsplit

import (
	"encoding/json"
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// TestUpdateOverConcurrentUpdate: an Update whose Release another store
// changed between this store's read and its write overwrites it (the last
// writer wins, as in Helm's own drivers), whole: the release read back is
// exactly the one written last.
func TestUpdateOverConcurrentUpdate(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	other, _ := openAs(t, k, kubeenv.Admin, ns)
	r := smallRelease("app", ns, 1, "c")
	if err := s.Create(key("app", 1), r); err != nil {
		t.Fatal(err)
	}
	theirs := smallRelease("app", ns, 1, "c")
	theirs.Info.Status = release.StatusSuperseded
	theirs.Info.Description = "written by the other writer"
	fired := false
	b.hooks.BeforePut = func(*driver.Head) error {
		b.hooks.BeforePut = nil
		fired = true
		return other.Update(key("app", 1), theirs)
	}
	mine := smallRelease("app", ns, 1, "c")
	mine.Info.Status = release.StatusFailed
	mine.Info.Description = "written last"
	if err := s.Update(key("app", 1), mine); err != nil {
		t.Fatalf("update over a concurrent update: %v, want it to overwrite", err)
	}
	if !fired {
		t.Fatal("the hook did not run: the interleaving was not tested")
	}
	for _, st := range []helm3.Store{s, other} {
		got, err := st.Get(key("app", 1))
		if err != nil {
			t.Fatal(err)
		}
		sameAsHelm(t, "the release written last", got, mine)
	}
}

// TestCleanupLosesToConcurrentReuse forces the interleaving the
// resourceVersion preconditions exist for: Delete has found a part's last
// other owner gone and is about to delete it, when a Create reuses the part.
// The delete must fail its precondition, look again, and keep the part.
func TestCleanupLosesToConcurrentReuse(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	other, _ := openAs(t, k, kubeenv.Admin, ns)
	// A large chart: the part has chunks, which must survive too.
	a := fixture.LargeRelease("a", ns, 1)
	if err := s.Create(key("a", 1), a); err != nil {
		t.Fatal(err)
	}
	chart := codecDigest(t, a, driver.KindChart)
	bRel := fixture.LargeRelease("b", ns, 1) // same chart
	fired := 0
	b.hooks.CleanupDecided = func(k driver.Kind, _ driver.Digest) {
		if k != driver.KindChart || fired > 0 {
			return
		}
		fired++
		if err := other.Create(key("b", 1), bRel); err != nil {
			t.Errorf("concurrent create: %v", err)
		}
	}
	if _, err := s.Delete(key("a", 1)); err != nil {
		t.Fatal(err)
	}
	if fired != 1 {
		t.Fatal("the hook did not run: the interleaving was not tested")
	}
	got, err := other.Get(key("b", 1))
	if err != nil {
		t.Fatalf("the release that reused the part during the delete: %v", err)
	}
	sameAsHelm(t, "reusing release", got, bRel)
	raw, err := b.c.get(ctxT(t), resCharts, ns, chart)
	if err != nil {
		t.Fatal(err)
	}
	var p partObject
	json.Unmarshal(raw, &p)
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].Name != key("b", 1) {
		t.Fatalf("chart owners %v, want only b", p.OwnerReferences)
	}
	if _, err := other.Delete(key("b", 1)); err != nil {
		t.Fatal(err)
	}
	assertNoObjects(t, b, ns, "left after deleting both releases")
}

// TestUpdateAfterStaleRead: a store that read a release, which another
// store then changed, overwrites it with its Update (last writer wins), and
// an Update of a release another store deleted is not found.
func TestUpdateAfterStaleRead(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	a, _ := openAs(t, k, kubeenv.Admin, ns)
	b, _ := openAs(t, k, kubeenv.Admin, ns)
	if err := a.Create(key("app", 1), smallRelease("app", ns, 1, "c")); err != nil {
		t.Fatal(err)
	}
	mine, err := a.Get(key("app", 1))
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := b.Get(key("app", 1))
	if err != nil {
		t.Fatal(err)
	}
	theirs.Info.Status = release.StatusSuperseded
	if err := b.Update(key("app", 1), theirs); err != nil {
		t.Fatal(err)
	}
	mine.Info.Status = release.StatusFailed
	if err := a.Update(key("app", 1), mine); err != nil {
		t.Fatalf("update based on a stale read: %v, want it to overwrite", err)
	}
	if got, err := b.Get(key("app", 1)); err != nil || got.Info.Status != release.StatusFailed {
		t.Fatalf("another store reads %v (%v) after the last update, want status failed", got.Info.Status, err)
	}
	again := mine
	// An Update of a release deleted by another writer is not found.
	if _, err := b.Delete(key("app", 1)); err != nil {
		t.Fatal(err)
	}
	if err := a.Update(key("app", 1), again); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("update of a release another writer deleted: %v", err)
	}
}
