package drivertest

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// largeKey identifies a release largeRelease makes.
type largeKey struct {
	name, ns      string
	version, size int
}

// largeMade caches what largeRelease made: each is made once per process
// (making one takes longer than storing it) and copied for each caller.
var largeMade struct {
	sync.Mutex
	m map[largeKey]*largeEntry
}

type largeEntry struct {
	once sync.Once
	r    *release.Release
	enc  split // of r, which no caller gets (they get copies)
	size int   // of r's JSON
}

// largeRelease returns a copy of revision version of a release whose JSON
// is at least size bytes (fixture.SizedRelease), with the entry it copied.
func largeRelease(t testing.TB, name, ns string, version, size int) (*release.Release, *largeEntry) {
	t.Helper()
	k := largeKey{name, ns, version, size}
	largeMade.Lock()
	if largeMade.m == nil {
		largeMade.m = map[largeKey]*largeEntry{}
	}
	e := largeMade.m[k]
	if e == nil {
		e = new(largeEntry)
		largeMade.m[k] = e
	}
	largeMade.Unlock()
	e.once.Do(func() {
		e.r, e.size = fixture.SizedRelease(name, ns, version, size)
		e.enc = splitOf(t, e.r, false)
	})
	return copyRelease(e.r), e
}

// copyRelease returns a copy of r that shares nothing a store could change
// with it: its own info, hooks, chart and file bytes. (Values maps are
// shared: the suite never changes them, and JSON encodings compared with
// what r encoded to catch any store that does.)
func copyRelease(r *release.Release) *release.Release {
	c := *r
	if r.Info != nil {
		info := *r.Info
		c.Info = &info
	}
	c.Hooks = make([]*release.Hook, len(r.Hooks))
	for i, h := range r.Hooks {
		hc := *h
		c.Hooks[i] = &hc
	}
	c.Chart = copyChart(r.Chart)
	return &c
}

func copyChart(ch *chart.Chart) *chart.Chart {
	if ch == nil {
		return nil
	}
	c := *ch
	if ch.Metadata != nil {
		md := *ch.Metadata
		c.Metadata = &md
	}
	files := func(fs []*chart.File) []*chart.File {
		if fs == nil {
			return nil
		}
		out := make([]*chart.File, len(fs))
		for i, f := range fs {
			out[i] = &chart.File{Name: f.Name, Data: bytes.Clone(f.Data)}
		}
		return out
	}
	c.Templates, c.Files, c.Raw = files(ch.Templates), files(ch.Files), files(ch.Raw)
	c.Schema = bytes.Clone(ch.Schema)
	return &c
}

func testLargeRelease(t *testing.T, h Harness) {
	s := h.open(t)
	size := h.largeBytes()
	r1, made := largeRelease(t, "huge", "default", 1, size)
	t.Logf("release JSON is %.1f MiB", float64(made.size)/(1<<20))
	mustCreate(t, s, r1)
	got, err := s.Get(key("huge", 1))
	if err != nil {
		t.Fatal(err)
	}
	sameAs(t, "large release", got, got.Labels, wanted{enc: made.enc, labels: map[string]string{}})

	// An upgrade: a new revision with the same chart (a copy of it), the
	// old one superseded.
	r2 := copyRelease(r1)
	r2.Version = 2
	r2.Info.LastDeployed = r2.Info.LastDeployed.Add(time.Hour)
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
		sameCustom(t, fmt.Sprintf("history v%d", r.Version), r, want)
	}
	for _, v := range []int{1, 2} {
		if _, err := s.Delete(key("huge", v)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Get(key("huge", 2)); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
	if st := stats(t, s); st.Releases != 0 || st.TotalParts() != 0 {
		t.Fatalf("after deleting everything the store holds %+v", st)
	}
}
