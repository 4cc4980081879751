package castest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// LogLines collects a store's log (driver.Config.Log, cas.Config.Log) for
// a test to look for what it said. The zero LogLines is ready to use.
type LogLines struct {
	mu    sync.Mutex
	lines []string
}

// Log adds a line, formatted as fmt.Sprintf does.
func (l *LogLines) Log(format string, v ...interface{}) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, v...))
	l.mu.Unlock()
}

// String returns the lines logged, one a line.
func (l *LogLines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// StuckCommit checks that a Create whose background commit hangs (the
// store's replace of the head never answers) holds up neither a Delete of
// the release past the Delete's deadline, which then fails as unavailable
// (not with the bare context error, not "not found"), nor Close past its
// bound, which says in the log what it left unfinished; and that another
// store then finds the release whole, and deletes it.
//
// open returns a store scoped to Namespace whose operations and Close are
// bounded by bound, logging to log, whose every replace of a head object
// hangs until its context ends while stall is set; reopen returns another
// store over the same data, scoped to Namespace, without stalls.
func StuckCommit(t *testing.T, bound time.Duration, open func(stall *atomic.Bool, log func(string, ...interface{})) helm3.Store, reopen func() helm3.Store) {
	t.Helper()
	var stall atomic.Bool
	var logs LogLines
	s := open(&stall, logs.Log)
	k := key("app", 1)
	r := ScenarioNamed("install").Ops[0].Rel
	stall.Store(true)
	if err := s.Create(k, r); err != nil {
		t.Fatalf("create (its commit stalls in the background): %v", err)
	}
	start := time.Now()
	_, err := s.Delete(k)
	if took := time.Since(start); took > 3*bound {
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
		t.Errorf("Close waited more than %v for a stuck commit; want it bounded, by %v", 3*bound, bound)
		<-closed
	}
	if !strings.Contains(logs.String(), k) {
		t.Errorf("Close left the commit of %s unfinished without saying so in the log:\n%s", k, logs.String())
	}
	stall.Store(false)

	o := reopen()
	defer o.Close()
	if got, err := o.Get(k); err != nil || got.Info.Status != release.StatusPendingInstall {
		t.Fatalf("another store's get of the release whose commit was stopped: %v", err)
	}
	if _, err := o.Delete(k); err != nil {
		t.Fatalf("another store's delete of it: %v", err)
	}
}
