// Package benchmarks is the benchmark loop every backend's benchmarks share
// (writes, reads cold and warm, bytes per revision), run through both Helm
// faces (helm3 and helm4) and beside Helm's own SQL driver of each Helm
// (HelmSQLTarget) in the same process, so that every backend measures the
// same operations on the same releases. The providers' bench_test.go files
// use it; it is for benchmarks only (it imports testing).
package benchmarks

import (
	"fmt"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	helm4driver "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/internal/testing/cputime"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// Bench is the timing loop every backend's benchmarks share, so that they
// measure the same operations on the same releases and compare with Helm's
// own drivers in the same run: each of its methods is the body of one
// benchmark (Create, Upgrade, Get, History, Deployed, List), with one
// sub-benchmark per target (and per cold or warm cache), and in it one per
// Face, named face=helm3 and face=helm4 (benchstat -col /face sets the two
// side by side). Use it as
//
//	var bench = benchmarks.Bench{Targets: benchTargets, CPU: true}
//
//	func BenchmarkGet(b *testing.B) { bench.Get(b) }
//
// The write benchmarks report B/rev, the bytes the store adds (or writes)
// per revision, from Store.Stored; with CPU set every benchmark also
// reports cpu-ms/op, the process's CPU time per operation; Store.Counters
// adds counts of the store's own (round trips, request charge) per operation.
//
// Both faces store the same releases: the Helm 4 runs take the revisions in
// Helm 4's types, converted by fixture4.Helm4 before the timer starts.
type Bench struct {
	// Targets returns the stores to compare, in the order their
	// sub-benchmarks run. It is called once per benchmark, with the
	// top-level b.
	Targets func(b *testing.B) []Target

	// Revisions returns n successive revisions (1..n) of release name in
	// namespace ns, each a values-only upgrade of the one before. The
	// read benchmarks store them all superseded but the last, deployed;
	// Upgrade stores revision 1 deployed; Create stores them as returned.
	// Default: fixture.StackRevisions.
	Revisions func(name, ns string, n int) []*release.Release

	// CPU reports cpu-ms/op, the CPU time of the whole process (user and
	// system) per operation, from the start to the end of the timed loop.
	CPU bool
}

// Face is the Helm a sub-benchmark talks to a store through: its driver
// interface and release types.
type Face string

// The two faces, in the order their sub-benchmarks run.
const (
	Helm3 Face = "helm3" // helm.sh/helm/v3's driver.Driver (package helm3, Helm 3's own drivers)
	Helm4 Face = "helm4" // helm.sh/helm/v4's driver.Driver (package helm4, Helm 4's own drivers)
)

// Faces are both faces, in the order their sub-benchmarks run.
var Faces = []Face{Helm3, Helm4}

// Target is one store the benchmarks run on: a helmstore backend, or
// the Helm driver it is compared with, each through both faces.
type Target struct {
	// Name names the target's sub-benchmarks: Name for the write
	// benchmarks, Name-cold and Name-warm for the reads of a ColdWarm
	// target, Name for the reads of any other; each has a sub-benchmark
	// per face, face=helm3 and face=helm4.
	Name string

	// ColdWarm runs the read benchmarks twice: on a store without part
	// cache (Name-cold, as a new helm process reads) and on one with the
	// default cache (Name-warm, as a long-running operator reads).
	ColdWarm bool

	// Helm marks one of Helm's own drivers: it has no summary listing,
	// and the listing benchmarks store their largest sets on it only
	// with LargeEnv (Bench.ActionList).
	Helm bool

	// SlowSeed marks a store that takes more than ~20 s to store even the
	// listing benchmarks' smallest sets (an API server, an emulator): it
	// runs them only with LargeEnv.
	SlowSeed bool

	// Open returns the store one run of a sub-benchmark uses through face
	// (its View for Helm3, its View4 for Helm4), empty of the release it
	// names, with its part cache on or off (cache is true for the write
	// benchmarks and for Name-warm). Open may return views of a store it
	// opened before, as long as Store.Release names a release no earlier
	// run used (and b.Cleanup removes it).
	Open func(b *testing.B, face Face, cache bool) Store
}

// Store is the store of one run of a sub-benchmark.
type Store struct {
	// View returns the store scoped to namespace ns ("" for all), as a
	// Helm 3 driver: set for the Helm3 face.
	View func(ns string) helmdriver.Driver

	// View4 is View as a Helm 4 driver: set for the Helm4 face.
	View4 func(ns string) helm4driver.Driver

	// Release names the release the benchmark stores ("" for "app").
	Release string

	// Stored returns the bytes the store holds, or has written so far:
	// the write benchmarks report its growth per revision as B/rev. Nil
	// for no B/rev.
	Stored func() int64

	// AfterWrite, if set, runs after each timed write of revision v of
	// release name, outside the timer (and outside cpu-ms/op only where CPU
	// is off): to wait for a store's background work, count what it
	// wrote, or delete old revisions.
	AfterWrite func(b *testing.B, name string, v int)

	// Counters, if set, returns running totals by metric unit (such as
	// "roundtrips/op"); each benchmark reports their growth over the
	// timed loop per operation.
	Counters func() map[string]float64

	// Settle, if set, waits for the store's background work (such as
	// crsplit's commits): the listing benchmarks call it after storing
	// their releases, outside the timer.
	Settle func()

	// fresh, set by OpenStore, returns a lister over a new store on the
	// same stored data (listerOf).
	fresh func(Face) *lister
}

func (bn Bench) revisions(name, ns string, n int) []*release.Release {
	if bn.Revisions != nil {
		return bn.Revisions(name, ns, n)
	}
	return fixture.StackRevisions(name, ns, n)
}

func benchKey(name string, v int) string { return fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, v) }

func (s Store) release() string {
	if s.Release == "" {
		return "app"
	}
	return s.Release
}

// timed runs op b.N times (i from 0) in the timer, with the metrics the
// bench reports per operation; after, if set, runs after each op outside
// the timer.
func (bn Bench) timed(b *testing.B, s Store, op func(i int) error, after func(i int)) {
	var before map[string]float64
	if s.Counters != nil {
		before = s.Counters()
	}
	b.ResetTimer()
	cpu := func() {}
	if bn.CPU {
		cpu = cputime.Start(b, "cpu-ms/op")
	}
	for i := 0; i < b.N; i++ {
		if err := op(i); err != nil {
			b.Fatal(err)
		}
		if after != nil {
			b.StopTimer()
			after(i)
			b.StartTimer()
		}
	}
	b.StopTimer()
	cpu()
	if s.Counters != nil {
		for unit, v := range s.Counters() {
			b.ReportMetric((v-before[unit])/float64(b.N), unit)
		}
	}
}

// faces runs run once per face, as sub-benchmark face=<face> of sub.
func faces(b *testing.B, sub string, run func(b *testing.B, f Face)) {
	b.Run(sub, func(b *testing.B) {
		for _, f := range Faces {
			b.Run("face="+string(f), func(b *testing.B) { run(b, f) })
		}
	})
}

// Create stores one values-only upgrade of the 2.2 MB release per op
// (revision 1 stored first) and reports the bytes each revision adds.
func (bn Bench) Create(b *testing.B) {
	bn.writes(b, false, func(c client, i int) error { return c.create(i + 1) })
}

// Upgrade writes per op what a values-only `helm upgrade` writes to
// storage: the new revision (pending-upgrade), the previous one marked
// superseded, the new one marked deployed; it reports the bytes each
// upgrade adds.
func (bn Bench) Upgrade(b *testing.B) {
	bn.writes(b, true, func(c client, i int) error {
		c.setStatus(i+1, release.StatusPendingUpgrade)
		if err := c.create(i + 1); err != nil {
			return err
		}
		c.setStatus(i, release.StatusSuperseded)
		if err := c.update(i); err != nil {
			return err
		}
		c.setStatus(i+1, release.StatusDeployed)
		return c.update(i + 1)
	})
}

// writes stores revision 1 (deployed if deployFirst), then times write(c,
// i) per op, which writes revision i+2 (index i+1 of the loaded revisions)
// after revision i+1 (index i), on each target with its cache on,
// reporting B/rev.
func (bn Bench) writes(b *testing.B, deployFirst bool, write func(c client, i int) error) {
	for _, t := range bn.Targets(b) {
		faces(b, t.Name, func(b *testing.B, f Face) {
			s := t.Open(b, f, true)
			name := s.release()
			rs := bn.revisions(name, "default", b.N+1)
			if deployFirst {
				rs[0].Info.Status = release.StatusDeployed
			}
			c := newClient(f, s, "default", rs)
			if err := c.create(0); err != nil {
				b.Fatal(err)
			}
			var before int64
			if s.Stored != nil {
				before = s.Stored()
			}
			var after func(i int)
			if s.AfterWrite != nil {
				after = func(i int) { s.AfterWrite(b, name, i+2) }
			}
			bn.timed(b, s, func(i int) error { return write(c, i) }, after)
			if s.Stored != nil {
				b.ReportMetric(float64(s.Stored()-before)/float64(b.N), "B/rev")
			}
		})
	}
}

// reads runs read on each target, cold and warm for a ColdWarm one, after
// storing 20 revisions of the 2.2 MB release and calling read once (which
// warms a warm store's cache).
func (bn Bench) reads(b *testing.B, read func(c client, name string) error) {
	for _, t := range bn.Targets(b) {
		run := func(sub string, cache bool) {
			faces(b, sub, func(b *testing.B, f Face) {
				s := t.Open(b, f, cache)
				name := s.release()
				rs := bn.history(name)
				c := newClient(f, s, "default", rs)
				for i := range rs {
					if err := c.create(i); err != nil {
						b.Fatal(err)
					}
				}
				read(c, name)
				bn.timed(b, s, func(int) error { return read(c, name) }, nil)
			})
		}
		if !t.ColdWarm {
			run(t.Name, false)
			continue
		}
		run(t.Name+"-cold", false)
		run(t.Name+"-warm", true)
	}
}

// history returns the 20 revisions the read benchmarks store.
func (bn Bench) history(name string) []*release.Release {
	rs := bn.revisions(name, "default", 20)
	for i, r := range rs {
		r.Info.Status = release.StatusSuperseded
		if i == len(rs)-1 {
			r.Info.Status = release.StatusDeployed
		}
	}
	return rs
}

// Get reads the latest of 20 revisions.
func (bn Bench) Get(b *testing.B) {
	bn.reads(b, func(c client, name string) error { return c.get(benchKey(name, 20)) })
}

// History reads the 20 revisions of a release, as `helm history` and
// every `helm upgrade` do.
func (bn Bench) History(b *testing.B) {
	bn.reads(b, func(c client, name string) error {
		n, err := c.history(name)
		if err == nil && n != 20 {
			err = fmt.Errorf("history: %d revisions, want 20", n)
		}
		return err
	})
}

// Deployed finds the deployed revision among 20, as `helm upgrade`,
// `helm status` and `helm get` do.
func (bn Bench) Deployed(b *testing.B) {
	bn.reads(b, func(c client, name string) error {
		v, err := c.deployed(name)
		if err == nil && v != 20 {
			err = fmt.Errorf("deployed: revision %d, want 20", v)
		}
		return err
	})
}

// List lists 200 releases (a typical ~150 KB application chart) in 20
// namespaces across all namespaces, as `helm list -A` does.
func (bn Bench) List(b *testing.B) {
	g := fixture.New(3)
	ch := g.Chart(fixture.ChartOptions{Name: "app", Version: "2.1.0", Templates: 40, TemplateSize: 2500, ValueKeys: 30})
	var rs []*release.Release
	for i := 0; i < 200; i++ {
		ns := fmt.Sprintf("ns-%02d", i%20)
		rs = append(rs, g.Release(fmt.Sprintf("app-%03d", i), ns, 1, ch, g.Values(10), release.StatusDeployed, 20000))
	}
	for _, t := range bn.Targets(b) {
		run := func(sub string, cache bool) {
			faces(b, sub, func(b *testing.B, f Face) {
				s := t.Open(b, f, cache)
				c := newClient(f, s, "", rs)
				for i, r := range rs {
					if err := c.createIn(r.Namespace, i); err != nil {
						b.Fatal(err)
					}
				}
				list := func(int) error {
					n, err := c.list()
					if err == nil && n != 200 {
						err = fmt.Errorf("list: %d releases, want 200", n)
					}
					return err
				}
				list(0)
				bn.timed(b, s, list, nil)
			})
		}
		if !t.ColdWarm {
			run(t.Name, false)
			continue
		}
		run(t.Name+"-cold", false)
		run(t.Name+"-warm", true)
	}
}
