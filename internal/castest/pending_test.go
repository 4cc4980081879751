package castest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/castest"
)

// loseFrom loses the answers of the process's writes from to to (0-based):
// each is applied, and fails as a timeout would.
func loseFrom(from, to int) castest.Plan {
	return func(op castest.Op) castest.Fault {
		if op.Write >= from && op.Write <= to {
			return castest.LoseAnswer
		}
		return castest.None
	}
}

// TestLostAnswersThenRetry: a Create that loses the answers to a run of
// its writes (the head's, parts', then its own rollback's) answers nil or
// unavailable, and the user's second Create, at once, from another
// process, answers as what a reader sees says (exists and found, or
// created), leaving exactly the one release and its parts.
func TestLostAnswersThenRetry(t *testing.T) {
	t.Parallel()
	k := key("app", 1)
	r := castest.ScenarioNamed("install-new-parts").Ops[0].Rel
	ref, _ := open(castest.New(nil), helm3.DefaultCacheBytes)
	if err := ref.Create(k, r); err != nil {
		t.Fatal(err)
	}
	want, err := ref.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to int }{{0, 0}, {0, 3}, {1, 1}, {1, 4}, {1, 12}, {2, 8}, {4, 30}} {
		data := castest.New(nil)
		w, _ := open(data.Process(loseFrom(c.from, c.to)), helm3.DefaultCacheBytes)
		err := w.Create(k, r)
		w.Close()
		if err != nil && (!errors.Is(err, helm3.ErrUnavailable) && !castest.IsInjected(err) || errors.Is(err, helm3.ErrReleaseExists)) {
			t.Fatalf("answers %d-%d lost: create: %v; want nil or the injected fault", c.from, c.to, err)
		}
		o, _ := open(data.Process(nil), helm3.DefaultCacheBytes)
		again := o.Create(k, r)
		switch {
		case err == nil && !errors.Is(again, helm3.ErrReleaseExists):
			t.Fatalf("answers %d-%d lost: the create succeeded, and the second one says %v; want exists", c.from, c.to, again)
		case again != nil && !errors.Is(again, helm3.ErrReleaseExists):
			t.Fatalf("answers %d-%d lost: the create said %v, and the second one at once: %v", c.from, c.to, err, again)
		case errors.Is(again, helm3.ErrReleaseExists):
			if _, gerr := o.Get(k); gerr != nil {
				t.Fatalf("answers %d-%d lost: the create said %v, the second one exists, but Get: %v", c.from, c.to, err, gerr)
			}
		}
		if got, err := o.Stats(context.Background()); err != nil || !castest.SameStats(got, want) {
			t.Fatalf("answers %d-%d lost: then the namespace holds %+v (%v); want %+v", c.from, c.to, got, err, want)
		}
		o.Close()
	}
}

// TestDeadWriterPendingWindow: the pending head of a writer that died
// after creating it keeps the key for the rest of the writer's pending
// window (its operation's deadline) plus ClockSkew, and no longer: the
// other process's clock is moved to just before that, then just after.
func TestDeadWriterPendingWindow(t *testing.T) {
	t.Parallel()
	const timeout, skew, margin = time.Minute, 30 * time.Second, 10 * time.Second
	openWith := func(s cas.ObjectStore, clock cas.Clock) helm3.Store {
		cfg := protocol
		cfg.ClockSkew, cfg.Clock = skew, clock
		return helm3.New(cas.New(s, cfg), &driver.Config{Name: "castest", CacheBytes: helm3.DefaultCacheBytes, Timeout: timeout,
			Log: func(string, ...interface{}) {}}).Namespace(ns)
	}
	data := castest.New(nil)
	k := key("app", 1)
	r := castest.ScenarioNamed("install").Ops[0].Rel
	start := time.Now()
	w := openWith(data.Process(castest.CrashAt(1)), nil)
	if err := w.Create(k, r); !castest.IsInjected(err) {
		t.Fatalf("create by a writer that dies after the head: %v", err)
	}
	w.Close()
	var clock castest.Clock
	o := openWith(data.Process(nil), &clock)
	defer o.Close()
	if err := o.Create(k, r); !errors.Is(err, helm3.ErrReleaseExists) {
		t.Fatalf("create within the dead writer's pending window: %v; want exists", err)
	}
	// The writer's window ended timeout after it started; the key is
	// free skew later.
	clock.Advance(timeout + skew - margin)
	if err := o.Create(k, r); !errors.Is(err, helm3.ErrReleaseExists) {
		if elapsed := time.Since(start); elapsed < margin {
			t.Fatalf("create %v before the dead writer's window and ClockSkew ended: %v; want exists", margin-elapsed, err)
		}
	}
	clock.Advance(margin + time.Second)
	if err := o.Create(k, r); err != nil {
		t.Fatalf("create after the dead writer's window and ClockSkew: %v", err)
	}
	if _, err := o.Get(k); err != nil {
		t.Fatalf("get after the create that took over: %v", err)
	}
}
