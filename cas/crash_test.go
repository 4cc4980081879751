package cas_test

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
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

// result is what a run found: the harness's checks (castest.CrashRun),
// and the faulted process's writes and whether it died.
type result struct {
	castest.CrashResult
	writes int
	dead   bool
}

// exec runs r on new data (castest.CrashRun.Exec), the faulted process
// running r.plan.
func (r run) exec() result {
	data := castest.New(nil)
	proc := data.Process(r.plan)
	cr := castest.CrashRun{
		Scenario: r.sc,
		Open: func(cacheBytes int64, clock cas.Clock) (helm3.Store, *cas.Backend) {
			return openClock(r.store(data.Process(nil)), cacheBytes, clock)
		},
		Faulted: func() helm3.Store { s, _ := open(r.store(proc), helm3.DefaultCacheBytes); return s },
		Readers: r.readers,
		Report: func() []string {
			return []string{fmt.Sprintf("the faulted process died: %v", proc.Dead()),
				"trace of the faulted process:\n    " + strings.Join(tail(proc.Trace(), 60), "\n    "), "store:\n" + data.Dump()}
		},
	}
	res := result{CrashResult: cr.Exec()}
	res.writes, res.dead = proc.Writes(), proc.Dead()
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
	t.Parallel()
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
			if len(res.Violations) > 0 {
				t.Fatalf("%s: %s", base.name(), strings.Join(res.Violations, "\n"))
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
		mu    sync.Mutex
		stats struct{ failed, dead, whole, reads int64 }
	)
	failures := castest.ExecCrashRuns(t, len(runs), 4, func(i int) (string, []string) {
		res := runs[i].exec()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range []struct {
			n  *int64
			on bool
		}{{&stats.failed, res.Failed}, {&stats.dead, res.dead}, {&stats.whole, res.Whole}} {
			if c.on {
				*c.n++
			}
		}
		stats.reads += res.Reads
		return runs[i].name(), res.Violations
	})
	t.Logf("%d runs (%d scenarios × with/without AddReferrer × %d fault kinds at each write, %d random seeds) in %v; %d violated an invariant",
		len(runs), len(scs), len(faultKinds), seeds, time.Since(start).Round(time.Millisecond), failures)
	t.Logf("%d runs had an op fail (%d of them with the op visible whole all the same), %d crashed the writer; readers checked %d reads during the runs",
		stats.failed, stats.whole, stats.dead, stats.reads)
}
