package cas_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// TestStuckCommitBounded runs castest.StuckCommit over a process whose
// replaces of head objects hang while stalled, with Close bounded by
// Config.CloseTimeout.
func TestStuckCommitBounded(t *testing.T) {
	t.Parallel()
	const bound = time.Second
	data := castest.New(nil)
	castest.StuckCommit(t, bound, func(stall *atomic.Bool, log func(string, ...interface{})) helm3.Store {
		proc := data.Process(nil).Slow(func(op castest.Op) time.Duration {
			if stall.Load() && op.Call == castest.CallReplace && op.Ref.Kind == cas.KindHead {
				return time.Hour // until the call's context ends
			}
			return 0
		})
		cfg := protocol
		cfg.CleanupTimeout = time.Minute
		cfg.CloseTimeout = bound
		cfg.Log = log
		return helm3.New(cas.New(proc, cfg), &driver.Config{Name: "castest", CacheBytes: helm3.DefaultCacheBytes, Timeout: bound, Log: log}).Namespace(ns)
	}, func() helm3.Store { s, _ := open(data.Process(nil), 0); return s })
}

// TestDeleteCleanupBounded: a Delete whose head delete succeeded but whose
// cleanup of the parts hangs (the store stops answering then) returns
// within its deadline, successfully (the release is gone); what the cleanup
// left is removed by helm3.Collect once the store answers again.
func TestDeleteCleanupBounded(t *testing.T) {
	t.Parallel()
	const bound = time.Second
	var stall atomic.Bool
	data := castest.New(nil)
	proc := data.Process(nil).Slow(func(op castest.Op) time.Duration {
		if stall.Load() && op.Ref.Kind != cas.KindHead && (op.Call == castest.CallDelete || op.Call == castest.CallReplace) {
			return time.Hour // until the call's context ends
		}
		return 0
	})
	cfg := protocol
	cfg.CleanupTimeout = time.Minute
	var logs castest.LogLines
	cfg.Log = logs.Log
	s := helm3.New(cas.New(proc, cfg), &driver.Config{Name: "castest", CacheBytes: helm3.DefaultCacheBytes, Timeout: bound, Log: logs.Log}).Namespace(ns)
	defer s.Close()
	k := key("app", 1)
	r := castest.ScenarioNamed("install").Ops[0].Rel
	if err := s.Create(k, r); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(k); err != nil { // its parts cached: Delete reads only the head
		t.Fatal(err)
	}
	stall.Store(true)
	start := time.Now()
	_, err := s.Delete(k)
	took := time.Since(start)
	stall.Store(false)
	if took > 3*bound {
		t.Errorf("Delete whose cleanup hangs took %v; want about its deadline, %v", took.Round(time.Millisecond), bound)
	}
	if err != nil {
		t.Errorf("Delete whose head is deleted and whose cleanup hangs: %v; want nil (the release is gone)", err)
	}
	o, _ := open(data.Process(nil), 0)
	defer o.Close()
	if _, err := o.Get(k); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("get after the Delete: %v; want not found", err)
	}
	if err := helm3.Collect(t.Context(), o); err != nil {
		t.Fatal(err)
	}
	if st, err := o.Stats(t.Context()); err != nil || st.TotalParts() != 0 {
		t.Fatalf("after Collect: %d parts left, %v; want none", st.TotalParts(), err)
	}
}
