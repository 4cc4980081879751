package crsplit

import (
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/types"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// rel is revision v of a small release with status st.
func rel(name, ns string, v int, st release.Status) *release.Release {
	r := smallRelease(name, ns, v, "chart-"+name)
	r.Info.Status = st
	return r
}

// headName is the name of the Release of name's revision v.
func headName(name string, v int) string { return driver.MakeKey(name, v) }

// A summary listing reads the Releases' metadata alone (a protobuf list of
// PartialObjectMetadata), each summary from the Release's annotation, and
// no record. A Release whose annotation is missing (written by an earlier
// version) or does not decode is read whole, alone; with more than
// summaryFallback of them, every Release is listed whole. The listing is
// the same in every case.
func TestSummaryListing(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	log := &requestLog{}
	cfg := k.Config(kubeenv.Admin)
	cfg.WrapTransport = log.wrap
	all, err := openStore(ctxT(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { all.Close() })
	s, b := all.Namespace(ns), kubeBackendOf(all)
	n := summaryFallback + 2
	for i := range n {
		if err := s.Create(driver.MakeKey(fmt.Sprintf("r-%03d", i), 1), rel(fmt.Sprintf("r-%03d", i), ns, 1, release.StatusDeployed)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Update(driver.MakeKey("r-000", 1), rel("r-000", ns, 1, release.StatusSuperseded)); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(driver.MakeKey("r-000", 2), rel("r-000", ns, 2, release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	b.WaitCommits()
	list := func() string {
		t.Helper()
		var out []string
		for _, q := range []helm3.SummaryQuery{{AllRevisions: true}, {}} {
			p, err := s.Summaries(ctxT(t), q)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%+v", p.Summaries))
		}
		return strings.Join(out, "\n")
	}
	want := list()
	if !strings.Contains(want, "Name:r-000 Revision:2") || strings.Count(want, "Name:r-") != 2*n+1 {
		t.Fatalf("Summaries = %s", want)
	}
	log.take()
	setAnnotation := func(name string, v any) {
		t.Helper()
		patch := map[string]any{"metadata": map[string]any{"annotations": map[string]any{annotationSummary: v}}}
		if _, err := b.c.patch(ctxT(t), resReleases, ns, name, types.MergePatchType, patch); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		what   string
		damage func()
		reqs   string // the requests (all GET) of the two listings, in order
	}{
		{"every annotation there", func() {}, "releases (metadata), releases (metadata)"},
		{"one annotation removed, one garbled, one of another Release", func() {
			setAnnotation(headName("r-001", 1), nil)
			setAnnotation(headName("r-002", 1), "{not json")
			other, err := b.c.getMeta(ctxT(t), resReleases, ns, headName("r-004", 1))
			if err != nil {
				t.Fatal(err)
			}
			setAnnotation(headName("r-003", 1), other.Annotations[annotationSummary])
		}, "releases (metadata), releases/" + headName("r-001", 1) + ", releases/" + headName("r-002", 1) + ", releases/" + headName("r-003", 1) + ", " +
			"releases (metadata), releases/" + headName("r-001", 1) + ", releases/" + headName("r-002", 1) + ", releases/" + headName("r-003", 1)},
		{"every annotation removed", func() {
			for i := range n {
				setAnnotation(headName(fmt.Sprintf("r-%03d", i), 1), nil)
			}
			setAnnotation(headName("r-000", 2), nil)
		}, "releases (metadata), releases, releases (metadata), releases"},
	} {
		c.damage()
		log.take()
		if got := list(); got != want {
			t.Fatalf("%s: Summaries =\n%s\nwant\n%s", c.what, got, want)
		}
		var reqs []string
		for _, r := range log.take() {
			if !strings.HasPrefix(r.what, "GET ") {
				t.Errorf("%s: request %s", c.what, r.what)
			}
			reqs = append(reqs, r.what[strings.LastIndex(r.what, "/"+resReleases)+1:])
		}
		if got := strings.Join(reqs, ", "); got != c.reqs {
			t.Errorf("%s: requests %s\nwant %s", c.what, got, c.reqs)
		}
	}
}
