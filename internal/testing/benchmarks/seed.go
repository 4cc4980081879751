package benchmarks

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"

	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// LargeEnv is the environment variable that runs the listing benchmarks'
// large sets (10,000 releases × 3 revisions, and the sets that take Helm's
// drivers more than ~20 s to store): HELMSTORE_BENCH_LARGE=1. Without it
// they are skipped, so that `make bench-smoke` stays fast.
const LargeEnv = "HELMSTORE_BENCH_LARGE"

// large reports whether LargeEnv is set to 1.
func large() bool { return os.Getenv(LargeEnv) == "1" }

// seedWorkers is how many goroutines store a set's releases at once.
const seedWorkers = 12

// A listSet is the releases a listing benchmark stores once per target and
// lists: releases releases of revisions revisions each, release i in
// namespace ListNamespace(i % namespaces), every revision superseded but
// the last, deployed.
type listSet struct {
	name                            string // the sub-benchmark's name
	releases, revisions, namespaces int
	// large: run only with LargeEnv; helmLarge: the same on Helm's
	// drivers; noHelm: never on Helm's drivers (their action.List of it
	// would hold gigabytes).
	large, helmLarge, noHelm bool
	// revs returns the revisions of release i, 1 first.
	revs func(i int) []*release.Release
}

// ListNamespace is the namespace of the i-th namespace of the listing
// benchmarks' sets (ns-000, ns-001, ...; at most 100 of them), which a
// target that needs its namespaces made must make.
func ListNamespace(i int) string { return fmt.Sprintf("ns-%03d", i) }

// ListNamespaces is how many namespaces the listing benchmarks' sets use at
// most (ListNamespace(0) to ListNamespace(ListNamespaces-1)).
const ListNamespaces = 100

// appChart is the typical application chart of the app sets: 40
// templates of ~1.4 KB, 30 default values.
var appChart = sync.OnceValue(func() *chart.Chart {
	return fixture.New(3).Chart(fixture.ChartOptions{Name: "app", Version: "2.1.0", Templates: 40, TemplateSize: 1400, ValueKeys: 30})
})

// appSet is n releases of the typical application chart (a 113 KB release
// in Helm's JSON: appChart, 10 values, a 20 KB manifest) × revs revisions
// in namespaces namespaces.
func appSet(n, revs, namespaces int) listSet {
	return listSet{name: fmt.Sprintf("app-%dx%d", n, revs), releases: n, revisions: revs, namespaces: namespaces,
		revs: func(i int) []*release.Release {
			g := fixture.New(uint64(1000 + i))
			name, ns := fmt.Sprintf("app-%05d", i), ListNamespace(i%namespaces)
			out := make([]*release.Release, revs)
			for v := 1; v <= revs; v++ {
				st := release.StatusSuperseded
				if v == revs {
					st = release.StatusDeployed
				}
				out[v-1] = g.Release(name, ns, v, appChart(), g.Values(10), st, 20000)
			}
			return out
		}}
}

// largeSet is set run only with LargeEnv, on Helm's drivers too unless
// noHelm.
func largeSet(set listSet, noHelm bool) listSet {
	set.large, set.helmLarge, set.noHelm = true, true, noHelm
	return set
}

// stackSet is n releases of the realistic large fixture (fixture.Stack, a
// 2.2 MB release) × 3 revisions (fixture.StackRevisions) in namespaces
// namespaces.
func stackSet(n, namespaces int) listSet {
	return listSet{name: fmt.Sprintf("stack-%dx3", n), releases: n, revisions: 3, namespaces: namespaces, helmLarge: true,
		revs: func(i int) []*release.Release {
			return fixture.StackRevisions(fmt.Sprintf("stack-%03d", i), ListNamespace(i%namespaces), 3)
		}}
}

// skipUnlessLarge skips b unless the set may run on t (a target of Helm's
// own, or one that seeds slowly, runs fewer without LargeEnv).
func (set listSet) skipUnlessLarge(b *testing.B, t Target) {
	if t.Helm && set.noHelm {
		b.Skipf("%s: not run on Helm's drivers (their action.List of it would hold gigabytes)", set.name)
	}
	if (set.large || t.Helm && set.helmLarge || t.SlowSeed) && !large() {
		b.Skipf("%s on %s: seeding takes more than ~20 s; run it with %s=1", set.name, t.Name, LargeEnv)
	}
}

// seed stores set through s's Helm 3 views, seedWorkers releases at once,
// each release's revisions in order, then waits for s to settle.
func seed(b *testing.B, s Store, set listSet) {
	start := time.Now()
	views := map[string]helmdriver.Driver{}
	for i := 0; i < set.namespaces; i++ {
		views[ListNamespace(i)] = s.View(ListNamespace(i))
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, seedWorkers)
	for range seedWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= set.releases {
					return
				}
				for _, r := range set.revs(i) {
					if err := views[r.Namespace].Create(benchKey(r.Name, r.Version), r); err != nil {
						errs <- fmt.Errorf("seed %s/%s v%d: %w", r.Namespace, r.Name, r.Version, err)
						next.Store(int64(set.releases))
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	if s.Settle != nil {
		s.Settle()
	}
	b.Logf("seeded %d releases × %d revisions in %d namespaces in %v", set.releases, set.revisions, set.namespaces, time.Since(start).Round(time.Millisecond))
}
