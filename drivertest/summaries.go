package drivertest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/testing/readcount"
)

// summaryReleases are the releases of the summary test: the suite's three
// namespaces (default, team-a, team-b: those a Kubernetes harness creates),
// a release name in two of them, latest revisions of every status (one
// failed over an older deployed one, one never deployed), charts of
// different names and versions, custom labels that change between
// revisions, times in several zones.
func summaryReleases() []*release.Release {
	ist := time.FixedZone("IST", 5*3600+1800)
	mk := func(ns, name string, v int, st release.Status, mod func(*release.Release)) *release.Release {
		r := rel(name, ns, v, st)
		r.Info.Description = fmt.Sprintf("%s of %s/%s", st, ns, name)
		if mod != nil {
			mod(r)
		}
		return r
	}
	labels := func(kv ...string) func(*release.Release) {
		return func(r *release.Release) {
			r.Labels = map[string]string{}
			for i := 0; i < len(kv); i += 2 {
				r.Labels[kv[i]] = kv[i+1]
			}
		}
	}
	return []*release.Release{
		mk("team-a", "app-a", 1, release.StatusSuperseded, nil),
		mk("team-a", "app-a", 2, release.StatusSuperseded, nil),
		mk("team-a", "app-a", 3, release.StatusDeployed, func(r *release.Release) {
			r.Info.LastDeployed = helmtime.Time{Time: time.Date(2026, 5, 4, 3, 2, 1, 123456789, ist)}
		}),
		mk("team-a", "app-b", 1, release.StatusDeployed, nil),
		mk("team-a", "app-b", 2, release.StatusFailed, func(r *release.Release) {
			r.Info.Description = "Upgrade \"app-b\" failed: context deadline exceeded"
		}),
		mk("team-a", "db", 1, release.StatusDeployed, func(r *release.Release) {
			labels("team", "data", "tier", "backend")(r)
			r.Chart = testChart("postgresql", "15.2.1")
		}),
		mk("team-b", "app-a", 1, release.StatusDeployed, func(r *release.Release) {
			r.Chart = testChart("web", "2.0.0")
			r.Chart.Metadata.AppVersion = ""
		}),
		mk("team-b", "job", 1, release.StatusPendingInstall, func(r *release.Release) {
			r.Info.LastDeployed = helmtime.Time{}
		}),
		mk("team-b", "svc", 1, release.StatusSuperseded, nil),
		mk("team-b", "svc", 2, release.StatusUninstalled, nil),
		mk("default", "app-c", 1, release.StatusSuperseded, labels("team", "old")),
		mk("default", "app-c", 2, release.StatusSuperseded, labels("team", "old")),
		mk("default", "app-c", 3, release.StatusSuperseded, labels("team", "web")),
		mk("default", "app-c", 4, release.StatusPendingUpgrade, labels("team", "web", "tier", "frontend")),
		mk("default", "other", 1, release.StatusDeployed, labels("team", "web")),
	}
}

// unsummarised is a backend whose heads were all stored before it kept
// summaries: List returns them without (the engine reads them whole).
type unsummarised struct{ driver.Backend }

func (u unsummarised) List(ctx context.Context, q driver.ListQuery) ([]*driver.Head, error) {
	hs, err := u.Backend.List(ctx, q)
	for _, h := range hs {
		h.HasSummary, h.ChartName, h.ChartVersion, h.AppVersion, h.Updated, h.Description = false, "", "", "", "", ""
	}
	return hs, err
}

// summaryCase is one listing, through Store.Summaries and through Helm's
// action.List (or, for every revision, Helm's Memory driver's List) over the
// same releases.
type summaryCase struct {
	name string
	ns   string // "": all namespaces
	q    helm3.SummaryQuery
	// helm configures Helm's list for the same selection; nil: every
	// revision whose status is in q.Statuses (Memory's List).
	helm func(*action.List)
}

var summaryCases = []summaryCase{
	{"LatestAll", "", helm3.SummaryQuery{}, func(l *action.List) { l.StateMask = action.ListAll }},
	{"LatestDefaultMask", "", helm3.SummaryQuery{Statuses: []string{"deployed", "failed"}},
		func(l *action.List) { l.StateMask = action.ListDeployed | action.ListFailed }},
	{"LatestPending", "", helm3.SummaryQuery{Statuses: []string{"pending-install", "pending-upgrade", "pending-rollback"}},
		func(l *action.List) {
			l.StateMask = action.ListPendingInstall | action.ListPendingUpgrade | action.ListPendingRollback
		}},
	{"LatestOneNamespace", "team-a", helm3.SummaryQuery{}, func(l *action.List) { l.StateMask = action.ListAll }},
	{"Filter", "", helm3.SummaryQuery{Filter: "^app-[ac]$"}, func(l *action.List) { l.StateMask, l.Filter = action.ListAll, "^app-[ac]$" }},
	{"NamePrefix", "", helm3.SummaryQuery{NamePrefix: "app-"}, func(l *action.List) { l.StateMask, l.Filter = action.ListAll, "^app-" }},
	{"Labels", "", helm3.SummaryQuery{Labels: map[string]string{"team": "web"}},
		func(l *action.List) { l.StateMask, l.Selector = action.ListAll, "team=web" }},
	{"LabelsOfOlderRevision", "", helm3.SummaryQuery{Labels: map[string]string{"team": "old"}},
		func(l *action.List) { l.StateMask, l.Selector = action.ListAll, "team=old" }},
	{"Superseded", "", helm3.SummaryQuery{AllRevisions: true, Statuses: []string{"superseded"}},
		func(l *action.List) { l.StateMask = action.ListSuperseded }},
	{"AllRevisions", "", helm3.SummaryQuery{AllRevisions: true}, nil},
	{"AllRevisionsOneNamespace", "default", helm3.SummaryQuery{AllRevisions: true}, nil},
	{"Nothing", "", helm3.SummaryQuery{NamePrefix: "absent"}, func(l *action.List) { l.StateMask, l.Filter = action.ListAll, "^absent" }},
	{"UnknownNamespace", "no-such-namespace", helm3.SummaryQuery{}, func(l *action.List) { l.StateMask = action.ListAll }},
}

// testSummaries checks Store.Summaries against Helm's own listing of the
// same releases on Helm's Memory driver (action.List, as helm list runs it,
// for the latest revisions; Memory's List for every revision), field by
// field, in every page size, and that it reads no part and no head body.
func testSummaries(t *testing.T, h Harness) {
	s := h.open(t)
	mem := helmdriver.NewMemory()
	for _, r := range summaryReleases() {
		if err := s.Namespace(r.Namespace).Create(key(r.Name, r.Version), r); err != nil {
			t.Fatalf("create %s/%s: %v", r.Namespace, key(r.Name, r.Version), err)
		}
		mem.SetNamespace(r.Namespace)
		if err := mem.Create(key(r.Name, r.Version), r); err != nil {
			t.Fatal(err)
		}
	}
	hd := engine.Of(s)
	if hd == nil {
		t.Skip("not a helmstore store: no backend to count reads on")
	}
	counter := readcount.New(hd.Backend())
	counted, ok := h.face().onFace(helm3.New(counter, hd.Config()))
	if !ok {
		t.Skip("the store cannot be put on this face")
	}
	legacy, ok := h.face().onFace(helm3.New(unsummarised{hd.Backend()}, hd.Config()))
	if !ok {
		t.Skip("the store cannot be put on this face")
	}
	for _, c := range summaryCases {
		t.Run(c.name, func(t *testing.T) {
			want := helmSummaries(t, mem, c)
			view := counted.Namespace(c.ns)
			got := allSummaries(t, view, c.q)
			if d := diffSummaries(got, want); d != "" {
				t.Fatalf("Summaries(%+v) in namespace %q differs from Helm's listing of the same releases:\n%s", c.q, c.ns, d)
			}
			if d := diffSummaries(allSummaries(t, legacy.Namespace(c.ns), c.q), want); d != "" {
				t.Fatalf("Summaries(%+v) in namespace %q of releases stored without summaries differs from Helm's listing:\n%s", c.q, c.ns, d)
			}
			for _, limit := range []int{1, 2, 3, 7} {
				q := c.q
				q.Limit = limit
				if d := diffSummaries(pagedSummaries(t, view, q), want); d != "" {
					t.Fatalf("Summaries(%+v) in namespace %q read in pages of %d differs from Helm's listing:\n%s", c.q, c.ns, limit, d)
				}
			}
		})
	}
	if n, m := counter.Counts(); n != 0 || m != 0 {
		t.Fatalf("summary listings made %d part reads and %d head reads: they must be served from the heads' index fields alone", n, m)
	}
	t.Run("BadInput", func(t *testing.T) {
		for _, q := range []helm3.SummaryQuery{{Filter: "(["}, {PageToken: "not a token"}, {Limit: -1}} {
			if p, err := s.Namespace("").Summaries(context.Background(), q); err == nil || errors.Is(err, helmdriver.ErrReleaseNotFound) {
				t.Fatalf("Summaries(%+v) = %d entries, %v; want an error that is not ErrReleaseNotFound", q, len(p.Summaries), err)
			}
		}
	})
}

// onFace puts s on face f (s itself on a face without put).
func (f *face) onFace(s helm3.Store) (helm3.Store, bool) {
	if f.put == nil {
		return s, true
	}
	return f.put(s)
}

// allSummaries lists q in one call, failing t on an error or a page token.
func allSummaries(t *testing.T, s helm3.Store, q helm3.SummaryQuery) []helm3.Summary {
	t.Helper()
	p, err := s.Summaries(context.Background(), q)
	if err != nil {
		t.Fatalf("Summaries(%+v): %v", q, err)
	}
	if p.NextPageToken != "" {
		t.Fatalf("Summaries(%+v) without a limit returned a page token", q)
	}
	return p.Summaries
}

// pagedSummaries lists q in pages of q.Limit, checking each page's size.
func pagedSummaries(t *testing.T, s helm3.Store, q helm3.SummaryQuery) []helm3.Summary {
	t.Helper()
	var out []helm3.Summary
	for range 1000 {
		p, err := s.Summaries(context.Background(), q)
		if err != nil {
			t.Fatalf("Summaries(%+v): %v", q, err)
		}
		if len(p.Summaries) > q.Limit {
			t.Fatalf("Summaries(%+v) returned %d entries, more than its limit", q, len(p.Summaries))
		}
		out = append(out, p.Summaries...)
		if p.NextPageToken == "" {
			return out
		}
		q.PageToken = p.NextPageToken
	}
	t.Fatalf("Summaries(%+v) gave page tokens without end", q)
	return nil
}

// helmSummaries is what Helm lists for c over mem, as summaries in the
// listing's order.
func helmSummaries(t *testing.T, mem *helmdriver.Memory, c summaryCase) []helm3.Summary {
	t.Helper()
	mem.SetNamespace(c.ns)
	var rs []*release.Release
	if c.helm == nil {
		all, err := mem.List(func(r *release.Release) bool {
			return len(c.q.Statuses) == 0 || slices.Contains(c.q.Statuses, r.Info.Status.String())
		})
		if err != nil {
			t.Fatal(err)
		}
		rs = all
	} else {
		l := action.NewList(&action.Configuration{Releases: storage.Init(mem),
			KubeClient: &kubefake.PrintingKubeClient{Out: io.Discard}, Log: func(string, ...interface{}) {}})
		l.AllNamespaces = c.ns == ""
		c.helm(l)
		var err error
		if rs, err = l.Run(); err != nil {
			t.Fatalf("Helm's list: %v", err)
		}
	}
	out := make([]helm3.Summary, len(rs))
	for i, r := range rs {
		out[i] = helm3.Summary{Namespace: r.Namespace, StorageNamespace: r.Namespace, Name: r.Name, Revision: r.Version, Status: r.Info.Status.String(),
			Chart: r.Chart.Metadata.Name, ChartVersion: r.Chart.Metadata.Version, AppVersion: r.Chart.Metadata.AppVersion,
			Updated: r.Info.LastDeployed.Time, Description: r.Info.Description, Labels: customOnly(r.Labels)}
	}
	slices.SortFunc(out, func(a, b helm3.Summary) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Revision, b.Revision))
	})
	return out
}

// diffSummaries describes how got differs from want ("" if it does not).
func diffSummaries(got, want []helm3.Summary) string {
	line := func(s helm3.Summary) string {
		return fmt.Sprintf("%s/%s r%d %s chart=%s-%s app=%q updated=%s desc=%q labels=%v",
			s.Namespace, s.Name, s.Revision, s.Status, s.Chart, s.ChartVersion, s.AppVersion,
			s.Updated.UTC().Format(time.RFC3339Nano), s.Description, s.Labels)
	}
	var b strings.Builder
	for i := range max(len(got), len(want)) {
		var g, w string
		if i < len(got) {
			g = line(got[i])
		}
		if i < len(want) {
			w = line(want[i])
		}
		same := g == w
		if same && i < len(got) && !got[i].Updated.Equal(want[i].Updated) {
			same = false
		}
		if same && i < len(got) && !maps.Equal(got[i].Labels, want[i].Labels) {
			same = false
		}
		if !same {
			fmt.Fprintf(&b, "  entry %d:\n    got  %s\n    want %s\n", i, g, w)
		}
	}
	return b.String()
}
