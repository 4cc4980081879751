package benchmarks

import (
	"context"
	"fmt"
	"testing"

	"github.com/helmstore/helmstore/driver"
)

// The listing benchmarks (ActionList, Summaries) store a set of releases
// once per target (outside the timer, seedWorkers at a time), then list
// them cold, as a new helm process or a dashboard's first request does:
// each op on a new store over the stored data, with its part cache off and
// nothing decoded yet (Helm's drivers, which cache nothing, list through
// the same driver every op). Their sub-benchmarks are
// <op>/<set>/<target>/face=<face>, the target Name-cold for a ColdWarm
// target; Helm's own drivers (Target.Helm) run through face=helm3 alone
// (their stores hold Helm 3's writes), ours through both faces over the
// same stored releases. Each op starts after a full collection; they report:
//
//   - peak-heap-MB: the most the heap's spans in use (MemStats.HeapInuse)
//     grew above what they were before the op, sampled every millisecond
//     while it ran; the largest of the run's ops;
//   - base-heap-MB: the heap in use before an op (the test process's own,
//     after collection), beside which a new helm process starts near zero;
//   - manifest-MB: the bytes of the manifests action.List returned (the
//     latest revision of every release), and peak/manifest, the ratio of
//     peak-heap-MB to it;
//   - listed-manifest-MB: the bytes of the manifests the driver's List
//     returned to action.List (every revision: Helm's interface has no
//     other listing; action.List keeps the latest of each release after),
//     and peak/listed;
//   - part-reads/op and head-reads/op (Summaries, helmstore's stores):
//     the engine's calls of the backend's Parts and Heads, which a summary
//     listing must not make (the benchmark fails if it does);
//   - the Store's Counters per op.
//
// They report no cpu-ms/op: the collection before each op is outside the
// timer but not outside the process's CPU time.

// The sets of ActionList and Summaries, in the order they run.
var (
	actionListSets = []listSet{
		appSet(1000, 3, 20),
		largeSet(appSet(1000, 10, 20), false),
		largeSet(appSet(10000, 3, 100), true),
		stackSet(200, 20),
	}
	summarySets = []listSet{
		appSet(1000, 3, 20),
		largeSet(appSet(1000, 10, 20), true),
		largeSet(appSet(10000, 3, 100), true),
	}
)

// ActionList times Helm's action.List as `helm list -A` runs it (every
// namespace, Helm's default state mask: the latest revision of each
// release, deployed or failed on Helm 3, any on Helm 4), cold, on these
// sets: app-1000x3, 1,000 releases of a typical application chart (a 113
// KB release) × 3 revisions in 20 namespaces; with LargeEnv, app-1000x10
// (the same releases × 10 revisions) and app-10000x3 (10,000 releases × 3
// in 100 namespaces; not on Helm's drivers); and stack-200x3, 200 releases
// of the realistic large fixture (fixture.Stack, 2.2 MB) × 3 revisions in
// 20 namespaces (on Helm's drivers only with LargeEnv: storing it takes
// them more than 20 s).
func (bn Bench) ActionList(b *testing.B) {
	targets := bn.Targets(b)
	for _, set := range actionListSets {
		b.Run(set.name, func(b *testing.B) {
			for _, t := range targets {
				b.Run(coldName(t), func(b *testing.B) {
					set.skipUnlessLarge(b, t)
					s := t.Open(b, Helm3, false)
					seed(b, s, set)
					for _, f := range Faces {
						if listerOf(s, f) == nil {
							continue
						}
						b.Run("face="+string(f), func(b *testing.B) {
							coldListings(b, s, f, set.releases, false, func(l *lister) (int, int64, error) { return l.list() })
						})
					}
				})
			}
		})
	}
}

// Summaries times a cold summary listing of every namespace (the latest
// revision of each release: Store.Summaries with the zero query, one page)
// on our stores, on ActionList's app sets (app-1000x10 and app-10000x3
// only with LargeEnv), and reports the part and head reads it made, which
// must be none. Helm's drivers have no summary listing: beside ours at 1,000 × 3
// they run action.List on the same set, as <target>-actionList.
func (bn Bench) Summaries(b *testing.B) {
	targets := bn.Targets(b)
	for _, set := range summarySets {
		b.Run(set.name, func(b *testing.B) {
			if set.large && !large() {
				b.Skipf("%s: seeding takes more than ~20 s; run it with %s=1", set.name, LargeEnv)
			}
			for _, t := range targets {
				if t.Helm && set.noHelm {
					continue
				}
				name := coldName(t)
				if t.Helm {
					name = t.Name + "-actionList"
				}
				b.Run(name, func(b *testing.B) {
					set.skipUnlessLarge(b, t)
					s := t.Open(b, Helm3, false)
					seed(b, s, set)
					for _, f := range Faces {
						l := listerOf(s, f)
						if l == nil {
							continue
						}
						b.Run("face="+string(f), func(b *testing.B) {
							if l.summaries == nil {
								coldListings(b, s, f, set.releases, false, func(l *lister) (int, int64, error) { return l.list() })
								return
							}
							coldListings(b, s, f, set.releases, true, func(l *lister) (int, int64, error) {
								return summaries(l, set.revisions)
							})
						})
					}
				})
			}
		})
	}
}

// coldName names t's sub-benchmarks of a cold listing.
func coldName(t Target) string {
	if t.ColdWarm {
		return t.Name + "-cold"
	}
	return t.Name
}

// summaries lists every namespace's latest revisions through l in one
// page, each of which must be revision revisions.
func summaries(l *lister, revisions int) (int, int64, error) {
	p, err := l.summaries(context.Background(), driver.SummaryQuery{})
	if err != nil {
		return 0, 0, err
	}
	if p.NextPageToken != "" {
		return 0, 0, fmt.Errorf("summaries: a next page (%q) without a limit", p.NextPageToken)
	}
	for _, s := range p.Summaries {
		if s.Revision != revisions {
			return 0, 0, fmt.Errorf("summaries: %s/%s at revision %d, want %d", s.Namespace, s.Name, s.Revision, revisions)
		}
	}
	return len(p.Summaries), 0, nil
}

// coldListings times op b.N times, each on a new lister of s through face
// f (listerOf, outside the timer), which must list want entries, and
// reports the listing benchmarks' metrics; with noReads, a backend read of
// a part or head fails the benchmark.
func coldListings(b *testing.B, s Store, f Face, want int, noReads bool, op func(*lister) (int, int64, error)) {
	var before map[string]float64
	if s.Counters != nil {
		before = s.Counters()
	}
	var peak, base uint64
	var manifest, listed, parts, heads int64
	counted := false
	b.StopTimer()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		l := listerOf(s, f)
		h := startHeapPeak()
		b.StartTimer()
		n, m, err := op(l)
		b.StopTimer()
		p := h.stop()
		if err != nil {
			b.Fatal(err)
		}
		if n != want {
			b.Fatalf("listed %d releases, want %d", n, want)
		}
		peak, base, manifest, listed = max(peak, p), max(base, h.base), m, l.listed.Load()
		if l.reads != nil {
			counted = true
			p, h := l.reads.Counts()
			parts += p
			heads += h
		}
	}
	const mb = 1 << 20
	b.ReportMetric(float64(peak)/mb, "peak-heap-MB")
	b.ReportMetric(float64(base)/mb, "base-heap-MB")
	if manifest > 0 {
		b.ReportMetric(float64(manifest)/mb, "manifest-MB")
		b.ReportMetric(float64(peak)/float64(manifest), "peak/manifest")
	}
	if listed > 0 {
		b.ReportMetric(float64(listed)/mb, "listed-manifest-MB")
		b.ReportMetric(float64(peak)/float64(listed), "peak/listed")
	}
	if counted {
		b.ReportMetric(float64(parts)/float64(b.N), "part-reads/op")
		b.ReportMetric(float64(heads)/float64(b.N), "head-reads/op")
		if noReads && (parts > 0 || heads > 0) {
			b.Errorf("the summary listing read parts %d times and heads %d times in %d listings: it must read neither", parts, heads, b.N)
		}
	}
	if s.Counters != nil {
		for unit, v := range s.Counters() {
			b.ReportMetric((v-before[unit])/float64(b.N), unit)
		}
	}
}
