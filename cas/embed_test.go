package cas_test

import (
	"encoding/json"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/fixture"
)

// TestEmbeddedDeltas follows the parts a values-only upgrade embeds in its
// head object (its values and the manifest delta) through every operation:
// the Create writes no part object for them, a cold read reads none, an
// Update keeps them, a Delete of the revision whose keyframe they use leaves
// them readable, and deleting every revision leaves nothing stored.
func TestEmbeddedDeltas(t *testing.T) {
	m := newMemStore()
	cfg := &driver.Config{Name: "cas-test", CacheBytes: helm3.DefaultCacheBytes, Timeout: helm3.DefaultTimeout}
	open := func() (helm3.Store, *cas.Backend) {
		b := cas.New(adderStore{m}, cas.Config{})
		return helm3.New(b, cfg).Namespace("ns"), b
	}
	s, b := open()
	stack := fixture.NewStack(1)
	r1 := stack.Release("app", "ns", 1)
	if err := s.Create(driver.MakeKey("app", 1), r1); err != nil {
		t.Fatal(err)
	}
	b.WaitCommits()
	r2 := stack.Upgrade(r1)
	calls := snapshotCalls(m)
	if err := s.Create(driver.MakeKey("app", 2), r2); err != nil {
		t.Fatal(err)
	}
	b.WaitCommits()
	d := diffCalls(m, calls)
	// One head created; the chart and the manifest keyframe gain it as a
	// referrer; the commit replaces the head. No part object is created.
	if d["create"] != 1 || d["addReferrer"] != 2 || d["replace"] != 1 {
		t.Errorf("values-only upgrade made calls %v; want 1 create (the head), 2 addReferrer, 1 replace (the commit)", d)
	}
	head := m.object(cas.Ref{Kind: cas.KindHead, Namespace: "ns", Name: driver.MakeKey("app", 2)})
	if head == nil || len(head.Head.Embedded) != 2 {
		t.Fatalf("revision 2's head embeds %v; want its values and manifest delta", embeddedDigests(head))
	}
	if got := m.count(cas.KindValues) + m.count(cas.KindManifest); got != 1 {
		t.Errorf("%d values and manifest part objects stored; want 1 (revision 1's manifest, the keyframe)", got)
	}

	// A cold store reads revision 2 without reading what it embeds.
	cold, _ := open()
	calls = snapshotCalls(m)
	got, err := cold.Get(driver.MakeKey("app", 2))
	if err != nil {
		t.Fatal(err)
	}
	sameRelease(t, got, r2)
	// The head, then the chart and the manifest keyframe: each a part
	// object and one chunk (memStore has no GetMany).
	if d := diffCalls(m, calls); d["get"]+d["list"] > 5 {
		t.Errorf("cold Get made calls %v; want 5 gets: the head, and the chart and manifest keyframe (part object and chunk each)", d)
	}

	// Helm's Update of the previous revision, then of this one: the frames stay embedded.
	r2.Info.Status = release.StatusSuperseded
	if err := s.Update(driver.MakeKey("app", 2), r2); err != nil {
		t.Fatal(err)
	}
	head = m.object(cas.Ref{Kind: cas.KindHead, Namespace: "ns", Name: driver.MakeKey("app", 2)})
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
	if n := len(m.objs); n != 0 {
		t.Errorf("%d objects left after every revision was deleted; want none", n)
	}
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

func snapshotCalls(m *memStore) map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for k, v := range m.calls {
		out[k] = v
	}
	return out
}

func diffCalls(m *memStore, before map[string]int) map[string]int {
	out := snapshotCalls(m)
	for k, v := range before {
		out[k] -= v
	}
	return out
}

func (m *memStore) object(ref cas.Ref) *cas.Object {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o, ok := m.objs[ref]; ok {
		return clone(o)
	}
	return nil
}

func (m *memStore) count(k cas.Kind) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for ref := range m.objs {
		if ref.Kind == k {
			n++
		}
	}
	return n
}
