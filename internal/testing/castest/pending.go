package castest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/helm3"
)

// LostAnswersThenRetry checks, for each run {from, to} of runs, that a
// Create losing the answers to its writes from to to (as the lossy process
// numbers them) (the head's, parts', then its own
// rollback's) answers nil, unavailable or the fault injected (IsInjected),
// and that the user's second Create, at once, from another process,
// answers as what a reader sees says (exists and found, or created),
// leaving exactly the one release and its parts (the Stats of a store that
// holds it alone); then the release is deleted, for the next run.
//
// open returns a new process's store over the test's data, scoped to
// Namespace, without faults; lossy returns one that loses the answers of
// its writes from to to, and lost, how many it lost so far: a run that loses
// none tests nothing, and fails.
func LostAnswersThenRetry(t *testing.T, runs [][2]int, open func() helm3.Store, lossy func(from, to int) (s helm3.Store, lost func() int)) {
	t.Helper()
	ctx := context.Background()
	k := key("app", 1)
	r := ScenarioNamed("install-new-parts").Ops[0].Rel
	ref := open()
	if err := ref.Create(k, r); err != nil {
		t.Fatal(err)
	}
	want, err := ref.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Delete(k); err != nil {
		t.Fatal(err)
	}
	ref.Close()
	for _, run := range runs {
		from, to := run[0], run[1]
		w, lost := lossy(from, to)
		err := w.Create(k, r)
		w.Close()
		if lost() == 0 {
			t.Fatalf("answers %d-%d: no answer was lost: the test tests nothing", from, to)
		}
		if err != nil && (!errors.Is(err, helm3.ErrUnavailable) && !IsInjected(err) || errors.Is(err, helm3.ErrReleaseExists)) {
			t.Fatalf("answers %d-%d lost: create: %v; want nil, unavailable or the injected fault", from, to, err)
		}
		o := open()
		start := time.Now()
		again := o.Create(k, r)
		switch {
		case err == nil && !errors.Is(again, helm3.ErrReleaseExists):
			t.Fatalf("answers %d-%d lost: the create succeeded, and the second one says %v; want exists", from, to, again)
		case again != nil && !errors.Is(again, helm3.ErrReleaseExists):
			t.Fatalf("answers %d-%d lost: the create said %v, and the second one at once: %v", from, to, err, again)
		case errors.Is(again, helm3.ErrReleaseExists):
			// Then the first Create happened: readers see it.
			if _, gerr := o.Get(k); gerr != nil {
				t.Fatalf("answers %d-%d lost: the create said %v, the second one exists, but Get: %v", from, to, err, gerr)
			}
		}
		t.Logf("answers %d-%d lost (%d): create: %v; the second create, after %v: %v",
			from, to, lost(), err, time.Since(start).Round(time.Millisecond), again)
		if got, err := o.Stats(ctx); err != nil || !SameStats(got, want) {
			t.Fatalf("answers %d-%d lost: then the namespace holds %+v (%v); want %+v", from, to, got, err, want)
		}
		if _, err := o.Delete(k); err != nil {
			t.Fatalf("answers %d-%d lost: delete: %v", from, to, err)
		}
		o.Close()
	}
}

// DeadWriterPendingWindow checks that the pending head of a writer that
// died after creating it keeps the key for the rest of the writer's
// pending window (its operation's deadline, timeout) plus skew
// (cas.Config.ClockSkew), and no longer: another process's clock is moved
// to just before that, then just after; so no test waits for the window.
//
// dying returns a store, scoped to Namespace, whose operations are bounded
// by timeout and whose process dies after its first write (the head's
// create): every call after it fails, with an error died reports (nil:
// IsInjected). open returns another process's store over the same data,
// scoped to Namespace, its operations bounded by timeout, with ClockSkew
// skew and clock as the protocol's Clock.
func DeadWriterPendingWindow(t *testing.T, timeout, skew time.Duration, dying func() (s helm3.Store, died func(error) bool), open func(clock cas.Clock) helm3.Store) {
	t.Helper()
	// margin is how far before the window's end the key is checked still
	// taken: more real time than the test takes to get there.
	margin := min(10*time.Second, timeout/2)
	k := key("app", 1)
	r := ScenarioNamed("install").Ops[0].Rel
	start := time.Now()
	w, died := dying()
	if died == nil {
		died = IsInjected
	}
	if err := w.Create(k, r); !died(err) {
		t.Fatalf("create by a writer that dies after the head: %v", err)
	}
	w.Close()
	var clock Clock
	o := open(&clock)
	defer o.Close()
	if _, err := o.Get(k); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("get of the dead writer's release: %v; want not found", err)
	}
	if err := o.Create(k, r); !errors.Is(err, helm3.ErrReleaseExists) {
		t.Fatalf("create within the dead writer's pending window: %v; want exists (the writer could still be working)", err)
	}
	// The writer's window ended timeout after it started; the key is
	// free skew later.
	clock.Advance(timeout + skew - margin)
	err := o.Create(k, r)
	if !errors.Is(err, helm3.ErrReleaseExists) && time.Since(start) < margin {
		t.Fatalf("create %v before the dead writer's window and ClockSkew ended: %v; want exists", margin-time.Since(start), err)
	}
	if err != nil {
		clock.Advance(margin + time.Second)
		if err := o.Create(k, r); err != nil {
			t.Fatalf("create after the dead writer's window and ClockSkew: %v", err)
		}
	}
	if _, err := o.Get(k); err != nil {
		t.Fatalf("get after the create that took over: %v", err)
	}
}
