package castest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/castest"
)

// run is one crash-point run: a scenario, with or without AddReferrer,
// the faulted process running plan.
type run struct {
	sc      scenario
	adder   bool
	plan    castest.Plan
	desc    string // how to name the run in a report (reproducible)
	readers bool   // a reader process checks what it sees during the run
	// wrap, if set, wraps every process's object store (to break it on
	// purpose).
	wrap func(cas.ObjectStore) cas.ObjectStore
}

// store returns the object store of process s for the run.
func (r run) store(s *castest.Store) cas.ObjectStore {
	os := objectStore(s, r.adder)
	if r.wrap != nil {
		os = r.wrap(os)
	}
	return os
}

func (r run) name() string {
	mode := "cas"
	if r.adder {
		mode = "adder"
	}
	return fmt.Sprintf("%s/%s/%s", r.sc.Name, mode, r.desc)
}

func objectStore(s *castest.Store, adder bool) cas.ObjectStore {
	if adder {
		return s
	}
	return s.WithoutReferrerAdder()
}

// result is what a run found: violations of the invariants (empty if
// none), and the faulted process's trace and the data for the report.
type result struct {
	violations []string
	writes     int
	// failed: an op failed; dead: the process crashed; whole: the failed
	// op is visible all the same (its answer was lost); reads: reads
	// checked during the run.
	failed, dead, whole bool
	reads               int64
}

func (r run) exec() result {
	var res result
	bad := func(format string, a ...any) { res.violations = append(res.violations, fmt.Sprintf(format, a...)) }
	data := castest.New(nil)
	setup, _ := open(r.store(data), helm3.DefaultCacheBytes)
	for _, o := range r.sc.Setup {
		if err := o.Run(setup); err != nil {
			bad("setup %s: %v", o, err)
			return res
		}
	}
	setup.Close()

	allowed := r.sc.Allowed()

	proc := data.Process(r.plan)
	s, _ := open(r.store(proc), helm3.DefaultCacheBytes)
	var wg sync.WaitGroup
	var otherErr error
	if r.sc.Other != nil {
		o, _ := open(r.store(data.Process(nil)), helm3.DefaultCacheBytes)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer o.Close()
			for _, op := range r.sc.Other {
				if err := op.Run(o); err != nil {
					otherErr = fmt.Errorf("%s: %w", op, err)
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	var readerBad []string
	var readerMu sync.Mutex
	var reads atomic.Int64
	if r.readers {
		rd, _ := open(r.store(data.Process(nil)), 0)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rd.Close()
			keys := make([]string, 0, len(allowed))
			for k := range allowed {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			note := func(format string, a ...any) {
				readerMu.Lock()
				readerBad = append(readerBad, fmt.Sprintf(format, a...))
				readerMu.Unlock()
			}
			for i := 0; ; i++ {
				select {
				case <-stop:
					if i > 0 {
						return
					}
				default:
				}
				reads.Add(1)
				k := keys[i%len(keys)]
				got, err := rd.Get(k)
				switch {
				case errors.Is(err, helm3.ErrReleaseNotFound):
					if !allowed[k][""] {
						note("reader: get %s: not found, but it exists in every state", k)
					}
				case err != nil:
					note("reader: get %s: %v", k, err)
				case !allowed[k][castest.Canon(got)]:
					note("reader: get %s: a release no state has (status %s, %s)", k, got.Info.Status, got.Info.Description)
				}
				if i%4 == 0 {
					rs, err := rd.List(func(*release.Release) bool { return true })
					if err != nil {
						note("reader: list: %v", err)
					}
					for _, got := range rs {
						if k := key(got.Name, got.Version); !allowed[k][castest.Canon(got)] {
							note("reader: list: %s: a release no state has (status %s)", k, got.Info.Status)
						}
					}
				}
			}
		}()
	}

	failed := len(r.sc.Ops)
	results := make([]string, 0, len(r.sc.Ops))
	for i, o := range r.sc.Ops {
		err := o.Run(s)
		results = append(results, fmt.Sprintf("%s: %v", o, err))
		if err != nil {
			failed = i
			if !castest.IsInjected(err) {
				bad("%s failed without an injected fault in its chain: %v", o, err)
			}
			break
		}
	}
	// Background work of the process: a live one finishes it, a dead one
	// can do nothing more (its calls fail) and must not hang Close.
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(2 * time.Minute):
		bad("Close of the faulted process did not return (dead %v)", proc.Dead())
	}
	close(stop)
	wg.Wait()
	res.writes, res.dead, res.reads = proc.Writes(), proc.Dead(), reads.Load()
	res.failed = failed < len(r.sc.Ops)
	res.violations = append(res.violations, readerBad...)
	if otherErr != nil {
		bad("the other process (no faults) failed: %v", otherErr)
	}

	check, _ := open(r.store(data.Process(nil)), 0)
	defer check.Close()
	seen, err := castest.Snapshot(check, allowed)
	if err != nil {
		bad("reading back: %v", err)
	}
	judged, whole := r.sc.Judge(seen, failed)
	res.violations = append(res.violations, judged...)
	res.whole = res.failed && whole

	// Garbage: once the dead writer's leftovers are stale, Collect
	// commits or removes them, and changes nothing readers see.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data.Age(cas.DefaultPendingTimeout + time.Minute)
	if err := helm3.Collect(ctx, check); err != nil {
		bad("collect: %v", err)
	}
	after, err := castest.Snapshot(check, allowed)
	if err != nil {
		bad("reading back after collect: %v", err)
	}
	if !castest.Equal(after, seen) {
		bad("collect changed what readers see: before %s, after %s", castest.KeysOf(seen), castest.KeysOf(after))
	}
	heads := 0
	for _, o := range data.Objects(cas.KindHead) {
		heads++
		if _, ok := o.Labels[cas.LabelPending]; ok {
			bad("head %s still pending (%s) after collect", o.Name, o.Labels[cas.LabelPending])
		}
	}
	if heads != len(after) {
		bad("%d head objects for %d visible releases after collect", heads, len(after))
	}
	// Nothing else is left: once every release is deleted (and collected),
	// the store is empty.
	for k := range after {
		if _, err := check.Delete(k); err != nil {
			bad("delete %s: %v", k, err)
		}
	}
	if err := helm3.Collect(ctx, check); err != nil {
		bad("collect after deleting everything: %v", err)
	}
	if n := data.Len(); n != 0 {
		bad("%d objects left after every release was deleted and collected: %v", n, data.Counts())
	}
	if len(res.violations) > 0 {
		res.violations = append(res.violations, "ops: "+strings.Join(results, "; "), "trace of the faulted process:\n    "+strings.Join(tail(proc.Trace(), 60), "\n    "), "store:\n"+data.Dump())
	}
	return res
}

func tail(s []string, n int) []string {
	if len(s) > n {
		return append([]string{fmt.Sprintf("(%d calls before)", len(s)-n)}, s[len(s)-n:]...)
	}
	return s
}

// faultKinds are the faults injected at each write in turn.
var faultKinds = []castest.Fault{castest.Crash, castest.CrashAfter, castest.Fail, castest.LoseAnswer}

// TestCrashPoints runs every scenario with each fault kind at each of its
// writes in turn (both with and without AddReferrer), then with random
// faults from seeds, and checks the invariants after each run (see exec).
// CASTEST_RUN=<run name> runs only the named run, as a failure names it.
func TestCrashPoints(t *testing.T) {
	only := os.Getenv("CASTEST_RUN")
	start := time.Now()
	var runs []run
	for _, sc := range scenarios() {
		for _, adder := range []bool{true, false} {
			// Count the scenario's writes in a run without faults
			// (the count varies a little with the interleaving:
			// go a few past it).
			base := run{sc: sc, adder: adder, plan: nil, desc: "no-faults"}
			res := base.exec()
			if len(res.violations) > 0 {
				t.Fatalf("%s: %s", base.name(), strings.Join(res.violations, "\n"))
			}
			step := 1
			if testing.Short() {
				step = 3
			}
			for n := 0; n < res.writes+2; n += step {
				for _, f := range faultKinds {
					runs = append(runs, run{sc: sc, adder: adder, plan: castest.At(n, f), desc: fmt.Sprintf("%s@%d", f, n), readers: n%5 == 0})
				}
			}
		}
	}
	seeds := 400
	if testing.Short() {
		seeds = 100
	}
	rates := castest.Rates{Fail: 0.03, LoseAnswer: 0.03, CrashAfter: 0.005, Crash: 0.005, ReadFail: 0.02, Stale: 0.3}
	scs := scenarios()
	for seed := 1; seed <= seeds; seed++ {
		sc := scs[seed%len(scs)]
		runs = append(runs, run{sc: sc, adder: seed/len(scs)%2 == 0, plan: castest.Random(uint64(seed), rates), desc: fmt.Sprintf("seed=%d", seed), readers: seed%3 == 0})
	}
	if only != "" {
		var keep []run
		for _, r := range runs {
			if r.name() == only {
				keep = append(keep, r)
			}
		}
		runs = keep
	}
	var (
		mu       sync.Mutex
		failures []string
		next     atomic.Int64
		stats    struct{ failed, dead, whole, reads int64 }
		wg       sync.WaitGroup
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(runs); i = int(next.Add(1) - 1) {
				r := runs[i]
				res := r.exec()
				mu.Lock()
				for _, c := range []struct {
					n  *int64
					on bool
				}{{&stats.failed, res.failed}, {&stats.dead, res.dead}, {&stats.whole, res.whole}} {
					if c.on {
						*c.n++
					}
				}
				stats.reads += res.reads
				mu.Unlock()
				if len(res.violations) > 0 {
					mu.Lock()
					failures = append(failures, r.name()+":\n  "+strings.Join(res.violations, "\n  "))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%d runs (%d scenarios × with/without AddReferrer × %d fault kinds at each write, %d random seeds) in %v; %d violated an invariant",
		len(runs), len(scs), len(faultKinds), seeds, time.Since(start).Round(time.Millisecond), len(failures))
	t.Logf("%d runs had an op fail (%d of them with the op visible whole all the same), %d crashed the writer; readers checked %d reads during the runs",
		stats.failed, stats.whole, stats.dead, stats.reads)
	sort.Strings(failures)
	for i, f := range failures {
		if i == 5 {
			t.Errorf("... and %d more", len(failures)-5)
			break
		}
		t.Error(f)
	}
}
