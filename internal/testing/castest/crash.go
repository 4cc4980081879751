package castest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/caswire"
)

// CrashRun is one crash-point run of a scenario, over a Store or over a
// backend's service (Exec): the scenario's Setup by a process without
// faults; its Ops by the faulted process, stopping at the first that
// fails, while another process runs the scenario's Other ops, if any, and
// (with Readers) a reader checks every release it reads against the
// states the scenario allows; then the checks of what a reader finds.
type CrashRun struct {
	Scenario Scenario
	// Open returns a new process's store over the run's data, scoped to
	// Namespace, without faults, and its protocol: with a cache of
	// cacheBytes (0: every read goes to the store), and clock as the
	// protocol's Clock (nil: the run's own).
	Open func(cacheBytes int64, clock cas.Clock) (helm3.Store, *cas.Backend)
	// Faulted returns the faulted process's store, scoped to Namespace.
	Faulted func() helm3.Store
	// Injected reports whether err, the error of an op of the faulted
	// process, comes from the fault injected (nil: IsInjected).
	Injected func(err error) bool
	// Readers: a reader process checks what it sees during the run.
	Readers bool
	// Report, if set, returns what to add to the report of a run that
	// violated an invariant (the faulted process's trace, the data).
	Report func() []string
}

// CrashResult is what a crash-point run found.
type CrashResult struct {
	// Violations of the invariants (none: nil).
	Violations []string
	// Failed: an op of the faulted process failed; Whole: that op is
	// visible whole all the same (its answer was lost).
	Failed, Whole bool
	// Reads is how many reads the reader process checked.
	Reads int64
}

// abandonAfter is how far the checking process's clock is moved ahead
// for Collect: past the pending window (the operation's deadline) and
// ClockSkew, and past PendingTimeout, of every head a writer left with the
// protocol's defaults.
const abandonAfter = cas.DefaultPendingTimeout + cas.DefaultClockSkew + time.Minute

// Exec runs r and checks, on a new process without a cache, that the ops
// before the failed one happened, the failed one wholly or not at all and
// none after it, and the other process's all (Scenario.Judge, on what
// Snapshot reads); then, its clock moved past the dead writer's pending
// windows, that Collect commits or removes what the writer left without
// changing what readers see and leaves no head pending, and that once
// every release is deleted and collected the store holds no object.
func (r CrashRun) Exec() CrashResult {
	var res CrashResult
	bad := func(format string, a ...any) { res.Violations = append(res.Violations, fmt.Sprintf(format, a...)) }
	injected := r.Injected
	if injected == nil {
		injected = IsInjected
	}
	sc := r.Scenario
	setup, _ := r.Open(helm3.DefaultCacheBytes, nil)
	for _, o := range sc.Setup {
		if err := o.Run(setup); err != nil {
			bad("setup %s: %v", o, err)
			setup.Close()
			return res
		}
	}
	setup.Close()

	allowed := sc.Allowed()
	s := r.Faulted()
	var wg sync.WaitGroup
	var otherErr error
	if sc.Other != nil {
		o, _ := r.Open(helm3.DefaultCacheBytes, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer o.Close()
			for _, op := range sc.Other {
				if err := op.Run(o); err != nil {
					otherErr = fmt.Errorf("%s: %w", op, err)
					return
				}
			}
		}()
	}
	stop := make(chan struct{})
	var reader readerChecks
	if r.Readers {
		rd, _ := r.Open(0, nil)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer rd.Close()
			reader.run(rd, allowed, stop)
		}()
	}

	failed := len(sc.Ops)
	results := make([]string, 0, len(sc.Ops))
	for i, o := range sc.Ops {
		err := o.Run(s)
		results = append(results, fmt.Sprintf("%s: %v", o, err))
		if err != nil {
			failed = i
			if !injected(err) {
				bad("%s failed without the injected fault in its chain: %v", o, err)
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
		bad("Close of the faulted process did not return")
	}
	close(stop)
	wg.Wait()
	res.Failed, res.Reads = failed < len(sc.Ops), reader.reads.Load()
	res.Violations = append(res.Violations, reader.violations()...)
	if otherErr != nil {
		bad("the other process (no faults) failed: %v", otherErr)
	}

	clock := &Clock{}
	check, cb := r.Open(0, clock)
	defer check.Close()
	seen, err := Snapshot(check, allowed)
	if err != nil {
		bad("reading back: %v", err)
	}
	judged, whole := sc.Judge(seen, failed)
	res.Violations = append(res.Violations, judged...)
	res.Whole = res.Failed && whole

	// Garbage: once the dead writer's leftovers are abandoned, Collect
	// commits or removes them, and changes nothing readers see.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	clock.Advance(abandonAfter)
	st := ObjectStore(cb)
	pending, err := st.List(ctx, cas.Selector{Kind: cas.KindHead, Namespace: Namespace, Has: []string{caswire.LabelPending}})
	if err != nil {
		bad("list pending heads: %v", err)
	}
	// Garbage (gc --dry-run) names every abandoned head, and removes
	// nothing: Collect finds them all still there.
	if g, err := cb.Garbage(ctx, Namespace); err != nil || g.PendingHeads != len(pending) {
		bad("garbage before collect: %+v, %v; want %d pending heads", g, err, len(pending))
	}
	if err := helm3.Collect(ctx, check); err != nil {
		bad("collect: %v", err)
	}
	if g, err := cb.Garbage(ctx, Namespace); err != nil || g.PendingHeads != 0 {
		bad("garbage after collect: %+v, %v; want no pending head", g, err)
	}
	after, err := Snapshot(check, allowed)
	if err != nil {
		bad("reading back after collect: %v", err)
	}
	if !Equal(after, seen) {
		bad("collect changed what readers see: before %s, after %s", KeysOf(seen), KeysOf(after))
	}
	heads, err := st.List(ctx, cas.Selector{Kind: cas.KindHead, Namespace: Namespace})
	if err != nil {
		bad("list heads: %v", err)
	}
	for _, h := range heads {
		if v, ok := h.Labels[caswire.LabelPending]; ok {
			bad("head %s still pending (%s) after collect", h.Name, v)
		}
	}
	if len(heads) != len(after) {
		bad("%d head objects for %d visible releases after collect", len(heads), len(after))
	}
	// Nothing else is left: once every release is deleted (and
	// collected), the store is empty.
	for k := range after {
		if _, err := check.Delete(k); err != nil {
			bad("delete %s: %v", k, err)
		}
	}
	if err := helm3.Collect(ctx, check); err != nil {
		bad("collect after deleting everything: %v", err)
	}
	if left := objectsLeft(ctx, st); left != "" {
		bad("objects left after every release was deleted and collected: %s", left)
	}
	if len(res.Violations) > 0 {
		res.Violations = append(res.Violations, "ops: "+strings.Join(results, "; "))
		if r.Report != nil {
			res.Violations = append(res.Violations, r.Report()...)
		}
	}
	return res
}

// readerChecks is what the reader process of a run found.
type readerChecks struct {
	reads atomic.Int64
	mu    sync.Mutex
	bad   []string
}

func (c *readerChecks) note(format string, a ...any) {
	c.mu.Lock()
	c.bad = append(c.bad, fmt.Sprintf(format, a...))
	c.mu.Unlock()
}

func (c *readerChecks) violations() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bad
}

// run reads the keys of allowed in turn, and lists every fourth read,
// until stop is closed (once at least), checking each release read is in
// a state allowed.
func (c *readerChecks) run(rd helm3.Store, allowed map[string]map[string]bool, stop <-chan struct{}) {
	keys := make([]string, 0, len(allowed))
	for k := range allowed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i := 0; ; i++ {
		select {
		case <-stop:
			if i > 0 {
				return
			}
		default:
		}
		c.reads.Add(1)
		k := keys[i%len(keys)]
		got, err := rd.Get(k)
		switch {
		case errors.Is(err, helm3.ErrReleaseNotFound):
			if !allowed[k][""] {
				c.note("reader: get %s: not found, but it exists in every state", k)
			}
		case err != nil:
			c.note("reader: get %s: %v", k, err)
		case !allowed[k][Canon(got)]:
			c.note("reader: get %s: a release no state has (status %s, %s)", k, got.Info.Status, got.Info.Description)
		}
		if i%4 == 0 {
			rs, err := rd.List(func(*release.Release) bool { return true })
			if err != nil {
				c.note("reader: list: %v", err)
			}
			for _, got := range rs {
				if k := key(got.Name, got.Version); !allowed[k][Canon(got)] {
					c.note("reader: list: %s: a release no state has (status %s)", k, got.Info.Status)
				}
			}
		}
	}
}

// objectsLeft describes every object of st, "" if there is none.
func objectsLeft(ctx context.Context, st cas.ObjectStore) string {
	var out []string
	for _, k := range []cas.Kind{cas.KindHead, cas.KindChart, cas.KindValues, cas.KindManifest, cas.KindChunk} {
		objs, err := st.List(ctx, cas.Selector{Kind: k, Meta: true})
		if err != nil {
			return fmt.Sprintf("(list %s: %v)", KindName(k), err)
		}
		for _, o := range objs {
			out = append(out, RefString(o.Ref()))
		}
	}
	return strings.Join(out, ", ")
}

// ExecCrashRuns calls exec(0), ..., exec(n-1) on workers goroutines, each
// returning a run's name and violations, and fails t with those of the
// first five runs (by name) that had any. It returns how many had.
func ExecCrashRuns(t testing.TB, n, workers int, exec func(i int) (name string, violations []string)) int {
	t.Helper()
	var (
		mu       sync.Mutex
		failures []string
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				name, violations := exec(i)
				if len(violations) > 0 {
					mu.Lock()
					failures = append(failures, name+":\n  "+strings.Join(violations, "\n  "))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	sort.Strings(failures)
	for i, f := range failures {
		if i == 5 {
			t.Errorf("... and %d more", len(failures)-5)
			break
		}
		t.Error(f)
	}
	return len(failures)
}
