package drivertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/fixture"
)

// LargeRelease returns revision version of a release whose JSON is at least
// size bytes, mostly chart (large CRD files), like the charts that break
// Helm's Secrets driver.
func LargeRelease(t testing.TB, name, ns string, version, size int) *release.Release {
	t.Helper()
	g := fixture.New(42)
	opts := fixture.LargeChartOptions
	opts.CRDs = size/(3*opts.CRDSize/2)*3/4 + 1
	ch := g.Chart(opts)
	r := g.Release(name, ns, version, ch, g.Values(40), release.StatusDeployed, size/8)
	for {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) >= size {
			return r
		}
		// Grow the chart until the release is big enough.
		extra := g.Chart(fixture.ChartOptions{Name: "x", Version: "1", CRDs: 4, CRDSize: 300000})
		ch.Files = append(ch.Files, extra.Files...)
	}
}

func testLargeRelease(t *testing.T, h Harness) {
	s := h.open(t)
	size := h.largeBytes()
	r1 := LargeRelease(t, "huge", "default", 1, size)
	b, _ := json.Marshal(r1)
	t.Logf("release JSON is %.1f MiB", float64(len(b))/(1<<20))
	mustCreate(t, s, r1)
	got, err := s.Get(key("huge", 1))
	if err != nil {
		t.Fatal(err)
	}
	sameRelease(t, "large release", got, r1)

	// An upgrade: a new revision with the same chart, the old one superseded.
	r2 := LargeRelease(t, "huge", "default", 2, size)
	r2.Config = map[string]interface{}{"upgraded": true}
	mustCreate(t, s, r2)
	r1.Info.Status = release.StatusSuperseded
	if err := s.Update(key("huge", 1), r1); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Query(map[string]string{"name": "huge", "owner": "helm"})
	if err != nil || len(rs) != 2 {
		t.Fatalf("history of the large release: %d, %v", len(rs), err)
	}
	for _, r := range rs {
		want := r1
		if r.Version == 2 {
			want = r2
		}
		n := Normalize(t, r)
		n.Labels = customOnly(r.Labels)
		sameRelease(t, fmt.Sprintf("history v%d", r.Version), n, want)
	}
	for _, v := range []int{1, 2} {
		if _, err := s.Delete(key("huge", v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Get(key("huge", 2)); !errors.Is(err, driver.ErrReleaseNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if st, ok := stats(t, s); ok && (st.Releases != 0 || st.TotalParts() != 0) {
		t.Fatalf("after deleting everything the store holds %+v", st)
	}
}
