package castest_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/castest"
)

// logLines collects a store's log.
type logLines struct {
	mu    sync.Mutex
	lines []string
}

func (l *logLines) log(format string, v ...interface{}) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, v...))
	l.mu.Unlock()
}

func (l *logLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// TestStuckCommitBounded: a Create's background commit that hangs (its
// store call never answers) holds up neither a Delete of the release past
// the Delete's deadline, which then fails as unavailable (not with the
// bare context error, not "not found"), nor Close past
// Config.CloseTimeout, which says in the log what it left unfinished.
func TestStuckCommitBounded(t *testing.T) {
	t.Parallel()
	const bound = time.Second
	var stall atomic.Bool
	data := castest.New(nil)
	proc := data.Process(nil).Slow(func(op castest.Op) time.Duration {
		if stall.Load() && op.Call == castest.CallReplace && op.Ref.Kind == cas.KindHead {
			return time.Hour // until the call's context ends
		}
		return 0
	})
	cfg := protocol
	cfg.CleanupTimeout = time.Minute
	cfg.CloseTimeout = bound
	var logs logLines
	cfg.Log = logs.log
	s := helm3.New(cas.New(proc, cfg), &driver.Config{Name: "castest", CacheBytes: helm3.DefaultCacheBytes, Timeout: bound, Log: logs.log}).Namespace(ns)
	k := key("app", 1)
	r := castest.ScenarioNamed("install").Ops[0].Rel
	stall.Store(true)
	if err := s.Create(k, r); err != nil {
		t.Fatalf("create (its commit stalls in the background): %v", err)
	}
	start := time.Now()
	_, err := s.Delete(k)
	took := time.Since(start)
	if took > 3*bound {
		t.Errorf("Delete waiting for a stuck commit took %v; want about its deadline, %v", took.Round(time.Millisecond), bound)
	}
	if err == nil || !errors.Is(err, helm3.ErrUnavailable) || errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Errorf("Delete waiting for a stuck commit: %v; want helm3.ErrUnavailable", err)
	}
	closed := make(chan error, 1)
	start = time.Now()
	go func() { closed <- s.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
		t.Logf("Close with a stuck commit returned after %v", time.Since(start).Round(time.Millisecond))
	case <-time.After(3 * bound):
		t.Errorf("Close waited more than %v for a stuck commit; want it bounded by CloseTimeout, %v", 3*bound, bound)
		<-closed
	}
	if !strings.Contains(logs.String(), k) {
		t.Errorf("Close left the commit of %s unfinished without saying so in the log:\n%s", k, logs.String())
	}
	stall.Store(false)

	// Another process finds the release whole, and deletes it.
	o, _ := open(data.Process(nil), 0)
	defer o.Close()
	if got, err := o.Get(k); err != nil || got.Info.Status != release.StatusPendingInstall {
		t.Fatalf("get after Close: %v", err)
	}
	if _, err := o.Delete(k); err != nil {
		t.Fatalf("delete after Close: %v", err)
	}
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
	var logs logLines
	cfg.Log = logs.log
	s := helm3.New(cas.New(proc, cfg), &driver.Config{Name: "castest", CacheBytes: helm3.DefaultCacheBytes, Timeout: bound, Log: logs.log}).Namespace(ns)
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
