package drivertest

import (
	"context"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// stats returns what s holds, failing t if it cannot say.
func stats(t testing.TB, s helm3.Store) helm3.Stats {
	t.Helper()
	st, err := s.Stats(context.Background())
	if err != nil {
		t.Fatalf("stats: %v", err)
	}
	return st
}

func testPartReuse(t *testing.T, h Harness) {
	s := h.open(t)
	g := fixture.New(7)
	ch := g.Chart(fixture.ChartOptions{Name: "reuse", Version: "1.0.0", Templates: 30, TemplateSize: 2000, CRDs: 2, CRDSize: 40000, ValueKeys: 20})
	values := make([]map[string]interface{}, 12)
	for i := range values {
		values[i] = map[string]interface{}{"revision": float64(i), "image": map[string]interface{}{"tag": "v1." + string(rune('a'+i))}}
	}
	created := map[int]*release.Release{}
	mk := func(ns string, v int, vals map[string]interface{}) *release.Release {
		r := g.Release("app", ns, v, ch, vals, release.StatusDeployed, 2000)
		r.Manifest = "# revision " + string(rune('a'+v)) + "\n" + r.Manifest
		if ns == "team-a" {
			created[v] = r
		}
		return r
	}
	want := func(what string, s helm3.Store, releases, charts, vals, manifests int) {
		t.Helper()
		st := stats(t, s)
		if st.Releases != releases || st.Parts["chart"] != charts || st.Parts["values"] != vals || st.Parts["manifest"] != manifests {
			t.Fatalf("%s: store holds %d releases and parts %v; want %d releases, %d chart, %d values, %d manifest parts",
				what, st.Releases, st.Parts, releases, charts, vals, manifests)
		}
	}
	a := s.Namespace("team-a")
	// Install and ten values-only upgrades: the chart is stored once.
	for v := 1; v <= 11; v++ {
		mustCreate(t, a, mk("team-a", v, values[v-1]))
	}
	want("install + 10 values-only upgrades", a, 11, 1, 11, 11)
	one := stats(t, a)

	// A rollback reuses the values of the revision it returns to.
	mustCreate(t, a, mk("team-a", 12, values[2]))
	want("rollback to revision 3's values", a, 12, 1, 11, 12)

	// The same chart in another namespace is that namespace's own part.
	b := s.Namespace("team-b")
	mustCreate(t, b, mk("team-b", 1, values[0]))
	want("same chart in team-b (team-a view)", a, 12, 1, 11, 12)
	want("same chart in team-b (all namespaces)", s.Namespace(""), 13, 2, 12, 13)

	// Deleting revisions 1-5 drops their own parts but keeps the chart and
	// the values revision 12 still shares with revision 3.
	for v := 1; v <= 5; v++ {
		if _, err := a.Delete(key("app", v)); err != nil {
			t.Fatal(err)
		}
	}
	want("after deleting revisions 1-5", a, 7, 1, 7, 7)
	for v := 6; v <= 12; v++ {
		r, err := a.Get(key("app", v))
		if err != nil {
			t.Fatalf("revision %d after deleting 1-5: %v", v, err)
		}
		sameRelease(t, "surviving revision", r, created[v])
	}
	for v := 6; v <= 12; v++ {
		if _, err := a.Delete(key("app", v)); err != nil {
			t.Fatal(err)
		}
	}
	want("after deleting every team-a revision", a, 0, 0, 0, 0)
	want("team-b untouched", b, 1, 1, 1, 1)
	if r, err := b.Get(key("app", 1)); err != nil || r.Chart == nil {
		t.Fatalf("team-b's release after team-a's were deleted: %v", err)
	}
	if one.PartBytes == 0 || one.StoredBytes() <= one.PartBytes {
		t.Fatalf("stats report no stored bytes: %+v", one)
	}
}
