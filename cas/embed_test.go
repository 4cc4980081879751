package cas_test

import (
	"encoding/json"
	"maps"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// TestEmbeddedDeltas follows the parts a values-only upgrade embeds in its
// head object (its values and the manifest delta) through every operation:
// the Create writes no part object for them, a cold read reads none, an
// Update keeps them, a Delete of the revision whose keyframe they use leaves
// them readable, and deleting every revision leaves nothing stored.
func TestEmbeddedDeltas(t *testing.T) {
	t.Parallel()
	calls := &callCounts{n: map[castest.Call]int{}}
	m := castest.New(calls.count)
	cfg := &driver.Config{Name: "cas-test", CacheBytes: helm3.DefaultCacheBytes, Timeout: helm3.DefaultTimeout}
	open := func() (helm3.Store, *cas.Backend) {
		b := cas.New(noBatch{m, m}, cas.Config{})
		return helm3.New(b, cfg).Namespace("ns"), b
	}
	s, b := open()
	stack := fixture.NewStack(1)
	r1 := stack.Release("app", "ns", 1)
	if err := s.Create(driver.MakeKey("app", 1), r1); err != nil {
		t.Fatal(err)
	}
	castest.WaitCommits(b)
	r2 := stack.Upgrade(r1)
	before := calls.snapshot()
	if err := s.Create(driver.MakeKey("app", 2), r2); err != nil {
		t.Fatal(err)
	}
	castest.WaitCommits(b)
	d := calls.since(before)
	// One head created; the chart and the manifest keyframe gain it as a
	// referrer; the commit replaces the head, after listing the revisions
	// below it, and revision 1 is retired from the index of latest
	// revisions (a replace). No part object is created.
	if d[castest.CallCreate] != 1 || d[castest.CallAddReferrer] != 2 || d[castest.CallReplace] != 2 || d[castest.CallList] != 1 {
		t.Errorf("values-only upgrade made calls %v; want 1 create (the head), 2 addReferrer, 1 list and 2 replaces (the commit, retiring revision 1)", d)
	}
	head := object(m, cas.Ref{Kind: cas.KindHead, Namespace: "ns", Name: driver.MakeKey("app", 2)})
	if head == nil || len(head.Head.Embedded) != 2 {
		t.Fatalf("revision 2's head embeds %v; want its values and manifest delta", embeddedDigests(head))
	}
	if n := m.Counts(); n[cas.KindValues]+n[cas.KindManifest] != 1 {
		t.Errorf("%d values and manifest part objects stored; want 1 (revision 1's manifest, the keyframe)", n[cas.KindValues]+n[cas.KindManifest])
	}

	// A cold store reads revision 2 without reading what it embeds.
	cold, _ := open()
	before = calls.snapshot()
	got, err := cold.Get(driver.MakeKey("app", 2))
	if err != nil {
		t.Fatal(err)
	}
	sameRelease(t, got, r2)
	// The head, then the chart and the manifest keyframe: each a part
	// object and one chunk (the store has no GetMany).
	if d := calls.since(before); d[castest.CallGet]+d[castest.CallList] > 5 {
		t.Errorf("cold Get made calls %v; want 5 gets: the head, and the chart and manifest keyframe (part object and chunk each)", d)
	}

	// Helm's Update of the previous revision, then of this one: the frames stay embedded.
	r2.Info.Status = release.StatusSuperseded
	if err := s.Update(driver.MakeKey("app", 2), r2); err != nil {
		t.Fatal(err)
	}
	head = object(m, cas.Ref{Kind: cas.KindHead, Namespace: "ns", Name: driver.MakeKey("app", 2)})
	if len(head.Head.Embedded) != 2 {
		t.Errorf("after Update, revision 2's head embeds %v; want the same 2 frames", embeddedDigests(head))
	}
	// Deleting revision 1 keeps the keyframe revision 2's delta needs.
	if _, err := s.Delete(driver.MakeKey("app", 1)); err != nil {
		t.Fatal(err)
	}
	cold, _ = open()
	if got, err = cold.Get(driver.MakeKey("app", 2)); err != nil {
		t.Fatalf("revision 2 after revision 1 (its keyframe's first user) was deleted: %v", err)
	}
	sameRelease(t, got, r2)
	deleted, err := s.Delete(driver.MakeKey("app", 2))
	if err != nil {
		t.Fatal(err)
	}
	sameRelease(t, deleted, r2)
	if n := m.Len(); n != 0 {
		t.Errorf("%d objects left after every revision was deleted; want none", n)
	}
}

// noBatch is a store with AddReferrer and without GetMany, so that the
// reads counted are one Get an object.
type noBatch struct {
	cas.ObjectStore
	cas.ReferrerAdder
}

// callCounts counts a castest process's calls, by method (a Plan that
// injects nothing).
type callCounts struct {
	mu sync.Mutex
	n  map[castest.Call]int
}

func (c *callCounts) count(op castest.Op) castest.Fault {
	c.mu.Lock()
	c.n[op.Call]++
	c.mu.Unlock()
	return castest.None
}

func (c *callCounts) snapshot() map[castest.Call]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}

// since returns the calls made since before (a snapshot).
func (c *callCounts) since(before map[castest.Call]int) map[castest.Call]int {
	out := c.snapshot()
	for k, v := range before {
		out[k] -= v
	}
	return out
}

// object returns the stored object ref names, nil if there is none.
func object(s *castest.Store, ref cas.Ref) *cas.Object {
	for _, o := range s.Objects(ref.Kind) {
		if o.Ref() == ref {
			return o
		}
	}
	return nil
}

// sameRelease fails t unless got and want encode to the same JSON.
func sameRelease(t *testing.T, got, want *release.Release) {
	t.Helper()
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	if string(a) != string(b) {
		t.Errorf("release %s v%d read back differs from the one written (%d bytes of JSON against %d)", want.Name, want.Version, len(a), len(b))
	}
}

func embeddedDigests(o *cas.Object) []string {
	if o == nil || o.Head == nil {
		return nil
	}
	var out []string
	for _, e := range o.Head.Embedded {
		out = append(out, e.Digest)
	}
	return out
}
