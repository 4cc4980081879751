package crsplit

import (
	"encoding/json"
	"errors"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/fixture"
	"github.com/helmstore/helmstore/internal/testenv"
)

// TestUpdateConflict: an Update whose Release changed between its read and
// its write fails with ErrConflict and overwrites nothing.
func TestUpdateConflict(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, testenv.KubeAdmin, ns)
	other, _ := openAs(t, k, testenv.KubeAdmin, ns)
	r := smallRelease("app", ns, 1, "c")
	if err := s.Create(key("app", 1), r); err != nil {
		t.Fatal(err)
	}
	theirs := smallRelease("app", ns, 1, "c")
	theirs.Info.Status = release.StatusSuperseded
	theirs.Info.Description = "written by the other writer"
	b.hooks.beforePut = func(*backend.Head) error {
		b.hooks.beforePut = nil
		return other.Update(key("app", 1), theirs)
	}
	mine := smallRelease("app", ns, 1, "c")
	mine.Info.Status = release.StatusFailed
	err := s.Update(key("app", 1), mine)
	if !errors.Is(err, ErrConflict) || errors.Is(err, driver.ErrReleaseNotFound) {
		t.Fatalf("update over a concurrent update: %v, want ErrConflict", err)
	}
	var re *driver.ReleaseError
	if !errors.As(err, &re) || re.Key != key("app", 1) {
		t.Fatalf("the conflict error does not name the release: %v", err)
	}
	got, err := s.Get(key("app", 1))
	if err != nil {
		t.Fatal(err)
	}
	if got.Info.Description != "written by the other writer" || got.Info.Status != release.StatusSuperseded {
		t.Fatalf("the other writer's update was overwritten: %s %q", got.Info.Status, got.Info.Description)
	}
	// Without a concurrent write the same Update goes through.
	if err := s.Update(key("app", 1), mine); err != nil {
		t.Fatal(err)
	}
}

// TestCleanupLosesToConcurrentReuse forces the interleaving the
// resourceVersion preconditions exist for: Delete has found a part's last
// other owner gone and is about to delete it, when a Create reuses the part.
// The delete must fail its precondition, look again, and keep the part.
func TestCleanupLosesToConcurrentReuse(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, testenv.KubeAdmin, ns)
	other, _ := openAs(t, k, testenv.KubeAdmin, ns)
	// A large chart: the part has chunks, which must survive too.
	a := fixture.LargeRelease("a", ns, 1)
	if err := s.Create(key("a", 1), a); err != nil {
		t.Fatal(err)
	}
	chart := codecDigest(t, a, codec.KindChart)
	bRel := fixture.LargeRelease("b", ns, 1) // same chart
	fired := 0
	b.hooks.cleanupDecided = func(res, name string) {
		if res != resCharts || fired > 0 {
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

// TestUpdateAfterStaleRead: optimistic concurrency spans Helm's own
// read-modify-write. A store that read a release, which another writer then
// changed, fails its Update with ErrConflict; after reading again it
// succeeds.
func TestUpdateAfterStaleRead(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	a, _ := openAs(t, k, testenv.KubeAdmin, ns)
	b, _ := openAs(t, k, testenv.KubeAdmin, ns)
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
	if err := a.Update(key("app", 1), mine); !errors.Is(err, ErrConflict) {
		t.Fatalf("update based on a stale read: %v, want ErrConflict", err)
	}
	if got, _ := b.Get(key("app", 1)); got.Info.Status != release.StatusSuperseded {
		t.Fatalf("the other writer's update was overwritten: %s", got.Info.Status)
	}
	again, err := a.Get(key("app", 1))
	if err != nil {
		t.Fatal(err)
	}
	again.Info.Status = release.StatusFailed
	if err := a.Update(key("app", 1), again); err != nil {
		t.Fatalf("update after reading again: %v", err)
	}
	// An Update of a release deleted by another writer is not found.
	if _, err := b.Delete(key("app", 1)); err != nil {
		t.Fatal(err)
	}
	if err := a.Update(key("app", 1), again); !errors.Is(err, driver.ErrReleaseNotFound) {
		t.Fatalf("update of a release another writer deleted: %v", err)
	}
}
