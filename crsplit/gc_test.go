package crsplit

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/casprobe"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// partOwners returns the names of the owners of a part, sorted; nil if the
// part does not exist.
func partOwners(t testing.TB, b *kubeBackend, ns string, k driver.Kind, digest string) []string {
	t.Helper()
	raw, err := b.c.get(ctxT(t), partResource(k), ns, digest)
	if objectMissing(err, partResource(k), digest) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var p partObject
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, o := range p.OwnerReferences {
		out = append(out, o.Name)
	}
	sort.Strings(out)
	return out
}

// deleteRaw deletes a Release object directly, as `kubectl delete` would,
// bypassing the backend.
func deleteRaw(t testing.TB, b *kubeBackend, ns, key string) {
	t.Helper()
	if err := b.c.delete(ctxT(t), resReleases, ns, releaseObjectName(key), "", ""); err != nil {
		t.Fatal(err)
	}
}

// TestGarbageExplicit checks the backend's own collection on a bare API
// server (no controller manager, so no cluster garbage collector): parts go
// as soon as Delete returns, shared parts only with their last owner, and
// owners left dangling by a crash do not keep a part alive.
// partUID returns the UID of the part object of kind k and digest in ns.
func partUID(t testing.TB, b *kubeBackend, ns string, k driver.Kind, digest string) types.UID {
	t.Helper()
	raw, err := b.c.get(ctxT(t), partResource(k), ns, digest)
	if err != nil {
		t.Fatal(err)
	}
	return meta(t, raw).UID
}

// chunksOf counts the Chunk objects in ns owned by the object with uid
// (other parts may be chunked too).
func chunksOf(t testing.TB, b *kubeBackend, ns string, uid types.UID) int {
	t.Helper()
	n := 0
	for _, c := range rawObjects(t, b, resChunks, ns) {
		for _, o := range meta(t, c).OwnerReferences {
			if o.UID == uid {
				n++
			}
		}
	}
	return n
}

func TestGarbageExplicit(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	rels := map[int]string{}
	for v := 1; v <= 3; v++ {
		r := fixture.LargeRelease("app", ns, v)
		if err := s.Create(key("app", v), r); err != nil {
			t.Fatal(err)
		}
		rels[v] = codecDigest(t, r, driver.KindValues)
	}
	chart := codecDigest(t, fixture.LargeRelease("app", ns, 1), driver.KindChart)
	chartUID := partUID(t, b, ns, driver.KindChart, chart)
	chunks := chunksOf(t, b, ns, chartUID)
	if got := partOwners(t, b, ns, driver.KindChart, chart); strings.Join(got, " ") != key("app", 1)+" "+key("app", 2)+" "+key("app", 3) {
		t.Fatalf("chart owners %v", got)
	}
	if chunks == 0 {
		t.Fatal("the chart was not chunked: the test would not cover chunks")
	}

	if _, err := s.Delete(key("app", 1)); err != nil {
		t.Fatal(err)
	}
	if partOwners(t, b, ns, driver.KindValues, rels[1]) != nil {
		t.Fatal("revision 1's values outlived it")
	}
	if got := partOwners(t, b, ns, driver.KindChart, chart); strings.Join(got, " ") != key("app", 2)+" "+key("app", 3) {
		t.Fatalf("after deleting revision 1, chart owners %v", got)
	}
	if n := chunksOf(t, b, ns, chartUID); n != chunks {
		t.Fatalf("%d chunks, want %d: the shared chart lost chunks", n, chunks)
	}

	// A crash between deleting a Release and cleaning up its parts: the
	// chart keeps an owner that no longer exists.
	deleteRaw(t, b, ns, key("app", 2))
	if got := partOwners(t, b, ns, driver.KindChart, chart); len(got) != 2 {
		t.Fatalf("chart owners %v: want the dangling one still there (no garbage collector runs)", got)
	}
	if _, err := s.Delete(key("app", 3)); err != nil {
		t.Fatal(err)
	}
	if got := partOwners(t, b, ns, driver.KindChart, chart); got != nil {
		t.Fatalf("chart still exists with owners %v after its last live owner was deleted", got)
	}
	if n := chunksOf(t, b, ns, chartUID); n != 0 {
		t.Fatalf("%d chunks left after the chart was deleted", n)
	}
	if partOwners(t, b, ns, driver.KindValues, rels[3]) != nil {
		t.Fatal("revision 3's values outlived it")
	}
	// What the crashed delete left (revision 2's own values) is not
	// referenced by any head: only a garbage collector removes it.
	if partOwners(t, b, ns, driver.KindValues, rels[2]) == nil {
		t.Fatal("revision 2's values vanished on a cluster without a garbage collector")
	}

	// Garbage (gc --dry-run) counts it and removes nothing; Collect
	// removes it, and then there is none.
	g, err := b.Garbage(ctxT(t), ns)
	if err != nil || g.Parts < 1 || g.PendingHeads != 0 {
		t.Fatalf("Garbage = %+v, %v; want revision 2's values among its parts", g, err)
	}
	t.Logf("garbage the crashed delete left: %+v", g)
	if partOwners(t, b, ns, driver.KindValues, rels[2]) == nil {
		t.Fatal("Garbage removed revision 2's values")
	}
	if err := b.Collect(ctxT(t), ns); err != nil {
		t.Fatal(err)
	}
	if partOwners(t, b, ns, driver.KindValues, rels[2]) != nil {
		t.Fatal("Collect left revision 2's values")
	}
	if g, err := b.Garbage(ctxT(t), ns); err != nil || g.Total() != 0 {
		t.Fatalf("Garbage after Collect = %+v, %v; want none", g, err)
	}
}

// TestGarbageCollector runs kube-controller-manager's garbage collector and
// deletes Release objects behind the backend's back (kubectl delete): the
// cluster removes each part with its last owner, and chunks with their part.
func TestGarbageCollector(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	k.StartControllerManager(t, "garbage-collector-controller")

	var values, manifests []string
	for v := 1; v <= 2; v++ {
		r := fixture.LargeRelease("app", ns, v)
		if err := s.Create(key("app", v), r); err != nil {
			t.Fatal(err)
		}
		values = append(values, codecDigest(t, r, driver.KindValues))
		manifests = append(manifests, codecDigest(t, r, driver.KindManifest))
	}
	if partOwners(t, b, ns, driver.KindManifest, manifests[1]) == nil {
		t.Fatal("revision 2's manifest has no Manifest object to collect")
	}
	other := smallRelease("other", ns, 1, "other-chart")
	if err := s.Create(key("other", 1), other); err != nil {
		t.Fatal(err)
	}
	chart := codecDigest(t, fixture.LargeRelease("app", ns, 1), driver.KindChart)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		if !testenv.WaitFor(ctx, cond) {
			t.Fatalf("garbage collector: timed out waiting until %s", what)
		}
	}

	deleteRaw(t, b, ns, key("app", 1))
	waitFor("revision 1's values are collected", func() bool { return partOwners(t, b, ns, driver.KindValues, values[0]) == nil })
	waitFor("the shared chart loses its deleted owner", func() bool {
		return strings.Join(partOwners(t, b, ns, driver.KindChart, chart), " ") == key("app", 2)
	})
	if n := count(t, b, resChunks, ns); n == 0 {
		t.Fatal("the chart still in use lost its chunks")
	}
	if _, err := s.Get(key("app", 2)); err != nil {
		t.Fatalf("revision 2 after revision 1 was collected: %v", err)
	}

	deleteRaw(t, b, ns, key("app", 2))
	waitFor("the chart, its chunks and revision 2's parts are collected", func() bool {
		return partOwners(t, b, ns, driver.KindChart, chart) == nil && count(t, b, resChunks, ns) == 0 &&
			partOwners(t, b, ns, driver.KindValues, values[1]) == nil && partOwners(t, b, ns, driver.KindManifest, manifests[1]) == nil
	})
	got, err := s.Get(key("other", 1))
	if err != nil {
		t.Fatal(err)
	}
	sameAsHelm(t, "unrelated release", got, other)
	// What is left is other's: its chart, and its values and manifest
	// unless they are small enough to be embedded in its Release.
	partKinds := []string{resCharts, resValues, resManifests, resChunks}
	counts := func() []int {
		var out []int
		for _, res := range partKinds {
			out = append(out, count(t, b, res, ns))
		}
		return out
	}
	others := counts()
	onlyOthers := func() bool { return slices.Equal(counts(), others) }
	if others[0] != 1 || others[3] != 0 {
		t.Fatalf("other's parts: %v objects of %v; want its chart and no chunks", others, partKinds)
	}

	// A crashed Create leaves a pending Release owning its parts; deleting
	// it (as an administrator would) lets the cluster collect them.
	b.hooks.BeforePart = crashAt(driver.KindValues)
	if err := s.Create(key("crashed", 1), fixture.LargeRelease("crashed", ns, 1)); !errors.Is(err, casprobe.ErrCrash) {
		t.Fatalf("crash: %v", err)
	}
	b.hooks.BeforePart = nil
	if _, err := s.Get(key("crashed", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("crashed create visible: %v", err)
	}
	deleteRaw(t, b, ns, key("crashed", 1))
	waitFor("the crashed create's parts are collected", onlyOthers)

	// The backend's own collection and the cluster's run side by side.
	for v := 1; v <= 3; v++ {
		if err := s.Create(key("both", v), fixture.LargeRelease("both", ns, v)); err != nil {
			t.Fatal(err)
		}
	}
	for v := 1; v <= 3; v++ {
		if _, err := s.Delete(key("both", v)); err != nil {
			t.Fatalf("delete with the garbage collector running: %v", err)
		}
	}
	// The collector may remove a part before the backend reads it, leaving
	// the part's chunks to the collector too: wait for both to settle.
	waitFor("only other's parts remain after deleting through the backend", onlyOthers)
}
