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

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend/cas"
	"github.com/helmstore/helmstore/driver/backend/cas/castest"
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
	return fmt.Sprintf("%s/%s/%s", r.sc.name, mode, r.desc)
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
	setup, _ := open(r.store(data), driver.DefaultCacheBytes)
	for _, o := range r.sc.setup {
		if err := o.run(setup); err != nil {
			bad("setup %s: %v", o, err)
			return res
		}
	}
	setup.Close()

	mine := states(r.sc.setup, r.sc.ops)
	var theirs []map[string]string
	if r.sc.other != nil {
		theirs = states(nil, r.sc.other)
	}
	// allowed[key] holds every value key has in some state a reader may
	// see, "" for absent.
	allowed := map[string]map[string]bool{}
	for _, ss := range [][]map[string]string{mine, theirs} {
		keys := map[string]bool{}
		for _, s := range ss {
			for k := range s {
				keys[k] = true
			}
		}
		for k := range keys {
			if allowed[k] == nil {
				allowed[k] = map[string]bool{}
			}
			for _, s := range ss {
				allowed[k][s[k]] = true
			}
		}
	}

	proc := data.Process(r.plan)
	s, _ := open(r.store(proc), driver.DefaultCacheBytes)
	var wg sync.WaitGroup
	var otherErr error
	if r.sc.other != nil {
		o, _ := open(r.store(data.Process(nil)), driver.DefaultCacheBytes)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer o.Close()
			for _, op := range r.sc.other {
				if err := op.run(o); err != nil {
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
				case errors.Is(err, driver.ErrReleaseNotFound):
					if !allowed[k][""] {
						note("reader: get %s: not found, but it exists in every state", k)
					}
				case err != nil:
					note("reader: get %s: %v", k, err)
				case !allowed[k][canon(got)]:
					note("reader: get %s: a release no state has (status %s, %s)", k, got.Info.Status, got.Info.Description)
				}
				if i%4 == 0 {
					rs, err := rd.List(func(*release.Release) bool { return true })
					if err != nil {
						note("reader: list: %v", err)
					}
					for _, got := range rs {
						if k := key(got.Name, got.Version); !allowed[k][canon(got)] {
							note("reader: list: %s: a release no state has (status %s)", k, got.Info.Status)
						}
					}
				}
			}
		}()
	}

	failed := len(r.sc.ops)
	results := make([]string, 0, len(r.sc.ops))
	for i, o := range r.sc.ops {
		err := o.run(s)
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
	res.failed = failed < len(r.sc.ops)
	res.violations = append(res.violations, readerBad...)
	if otherErr != nil {
		bad("the other process (no faults) failed: %v", otherErr)
	}

	check, cb := open(r.store(data.Process(nil)), 0)
	defer check.Close()
	// The state: the ops before the failed one happened, the failed one
	// wholly or not at all, none after it.
	want := []map[string]string{mine[failed]}
	if failed < len(r.sc.ops) {
		want = append(want, mine[failed+1])
	}
	seen, err := snapshot(check, allowed)
	if err != nil {
		bad("reading back: %v", err)
	}
	mineSeen, theirsSeen := split(seen, r.sc.otherRelease)
	res.whole = res.failed && equal(mineSeen, want[1])
	if !anyEqual(mineSeen, want) {
		bad("state after op %d of %d failed is none of the %d allowed:\n  have %s\n  want %s", failed, len(r.sc.ops), len(want), keysOf(mineSeen), describe(want))
	}
	if theirs != nil && !equal(theirsSeen, theirs[len(theirs)-1]) {
		bad("the other process's releases: have %s, want %s", keysOf(theirsSeen), keysOf(theirs[len(theirs)-1]))
	}
	for _, name := range []string{"app", "keep", r.sc.otherRelease} {
		if n := deployed(seen, name); n > 1 {
			bad("%d revisions of %s deployed", n, name)
		}
	}

	// Garbage: once the dead writer's leftovers are stale, Collect
	// commits or removes them, and changes nothing readers see.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	data.Age(cas.DefaultPendingTimeout + time.Minute)
	if err := cb.Collect(ctx, ns); err != nil {
		bad("collect: %v", err)
	}
	after, err := snapshot(check, allowed)
	if err != nil {
		bad("reading back after collect: %v", err)
	}
	if !equal(after, seen) {
		bad("collect changed what readers see: before %s, after %s", keysOf(seen), keysOf(after))
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
	if err := cb.Collect(ctx, ns); err != nil {
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

// snapshot reads every release of the namespace: List, and Get of each,
// which must agree.
// Every key of keys that List left out must be not found: a release that
// cannot be read (missing parts) is skipped by List, but Get reports it.
func snapshot(s driver.Store, keys map[string]map[string]bool) (out map[string]string, err error) {
	rs, err := s.List(func(*release.Release) bool { return true })
	if err != nil {
		return nil, err
	}
	out = map[string]string{}
	defer func() {
		for k := range keys {
			if _, ok := out[k]; ok {
				continue
			}
			if _, gerr := s.Get(k); !errors.Is(gerr, driver.ErrReleaseNotFound) && err == nil {
				err = fmt.Errorf("get %s, which list left out: %v", k, gerr)
			}
		}
	}()
	for _, r := range rs {
		k := key(r.Name, r.Version)
		out[k] = canon(r)
		got, err := s.Get(k)
		if err != nil {
			return nil, fmt.Errorf("get %s, which list returned: %w", k, err)
		}
		if canon(got) != out[k] {
			return nil, fmt.Errorf("get %s differs from list", k)
		}
	}
	for _, name := range []string{"app", "keep", "web"} {
		n := 0
		for k := range out {
			if strings.HasPrefix(k, key(name, 0)[:len(key(name, 0))-1]) {
				n++
			}
		}
		rs, err := s.Query(map[string]string{"name": name})
		if errors.Is(err, driver.ErrReleaseNotFound) {
			rs, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("query name=%s: %w", name, err)
		}
		if len(rs) != n {
			return nil, fmt.Errorf("query name=%s: %d releases, list has %d", name, len(rs), n)
		}
	}
	return out, nil
}

// split separates the releases of the other process (name other) from the
// rest.
func split(m map[string]string, other string) (mine, theirs map[string]string) {
	mine, theirs = map[string]string{}, map[string]string{}
	for k, v := range m {
		if other != "" && strings.HasPrefix(k, "sh.helm.release.v1."+other+".v") {
			theirs[k] = v
		} else {
			mine[k] = v
		}
	}
	return mine, theirs
}

func deployed(m map[string]string, name string) int {
	n := 0
	for k, v := range m {
		if strings.HasPrefix(k, "sh.helm.release.v1."+name+".v") && strings.Contains(v, `"status":"deployed"`) {
			n++
		}
	}
	return n
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func anyEqual(a map[string]string, bs []map[string]string) bool {
	for _, b := range bs {
		if equal(a, b) {
			return true
		}
	}
	return false
}

// keysOf describes a state: its keys with each release's status.
func keysOf(m map[string]string) string {
	var out []string
	for k, v := range m {
		st := "?"
		if i := strings.Index(v, `"status":"`); i >= 0 {
			st = v[i+10:]
			st = st[:strings.IndexByte(st, '"')]
		}
		out = append(out, strings.TrimPrefix(k, "sh.helm.release.v1.")+"="+st)
	}
	sort.Strings(out)
	return "[" + strings.Join(out, " ") + "]"
}

func describe(ms []map[string]string) string {
	var out []string
	for _, m := range ms {
		out = append(out, keysOf(m))
	}
	return strings.Join(out, " or ")
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
