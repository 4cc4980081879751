package cosmos

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/castest"
)

// errAnswerLost is what a request whose answer loseAnswers dropped fails
// with.
var errAnswerLost = errors.New("the answer was lost (test)")

// loseAnswers is a per-call policy that sends every request, and drops
// the answers of the item writes numbered from, from+1, ..., to (counted
// from 1): the service applied them, the client gets an error.
type loseAnswers struct {
	from, to int64
	writes   atomic.Int64
	lost     atomic.Int64
}

func (l *loseAnswers) Do(req *policy.Request) (*http.Response, error) {
	write := isItemWrite(req.Raw())
	resp, err := req.Next()
	if write {
		if n := l.writes.Add(1); n >= l.from && n <= l.to {
			if err == nil {
				resp.Body.Close()
			}
			l.lost.Add(1)
			return nil, errAnswerLost
		}
	}
	return resp, err
}

// TestLostAnswersThenRetry: a Create that loses the answers to a run of
// its writes (a part's, then those of its own rollback) fails, and leaves
// nothing: the user's second Create, at once, from another process,
// succeeds, and the namespace then holds exactly that release. Before
// pending windows, the rollback gave up and left a pending head that made
// every Create of the key fail with "exists" for ten minutes, while Get
// said not found.
func TestLostAnswersThenRetry(t *testing.T) {
	conn := connString(t)
	k := driver.MakeKey("app", 1)
	r := smallRelease("app", "lost", 1, release.StatusDeployed)
	// The reference: the same release stored by a store without faults.
	ref, _ := openTest(t, connString(t), options{})
	defer ref.Close()
	if err := ref.Namespace("lost").Create(k, r); err != nil {
		t.Fatal(err)
	}
	want, err := ref.Namespace("lost").Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to int64 }{{1, 1}, {1, 3}, {2, 2}, {2, 4}, {2, 8}, {3, 6}} {
		lose := &loseAnswers{from: c.from, to: c.to}
		w, _ := openTest(t, conn, options{perCall: []policy.Policy{lose}}, helm3.WithTimeout(20*time.Second), quiet)
		err := w.Namespace("lost").Create(k, r)
		w.Close()
		if lose.lost.Load() == 0 {
			t.Fatalf("answers %d-%d: no answer was lost (%d item writes): the test tests nothing", c.from, c.to, lose.writes.Load())
		}
		if err != nil && (!errors.Is(err, helm3.ErrUnavailable) || errors.Is(err, helm3.ErrReleaseExists)) {
			t.Fatalf("answers %d-%d lost: create: %v; want nil or helm3.ErrUnavailable", c.from, c.to, err)
		}
		o, _ := openTest(t, conn, options{}, helm3.WithTimeout(20*time.Second))
		ns := o.Namespace("lost")
		start := time.Now()
		again := ns.Create(k, r)
		switch {
		case err == nil && !errors.Is(again, helm3.ErrReleaseExists):
			t.Fatalf("answers %d-%d lost: the create succeeded, and the second one says %v; want exists", c.from, c.to, again)
		case err != nil && again != nil && !errors.Is(again, helm3.ErrReleaseExists):
			t.Fatalf("answers %d-%d lost: the create failed (%v), and the second one at once: %v", c.from, c.to, err, again)
		case errors.Is(again, helm3.ErrReleaseExists):
			// Then the first Create happened: readers see it.
			if _, gerr := ns.Get(k); gerr != nil {
				t.Fatalf("answers %d-%d lost: the create said %v, the second one exists, but Get: %v", c.from, c.to, err, gerr)
			}
		}
		t.Logf("answers %d-%d lost (%d of %d item writes): create: %v; the second create, after %v: %v",
			c.from, c.to, lose.lost.Load(), lose.writes.Load(), err, time.Since(start).Round(time.Millisecond), again)
		if got, err := ns.Stats(context.Background()); err != nil || !castest.SameStats(got, want) {
			t.Fatalf("answers %d-%d lost: then the namespace holds %+v (%v); want %+v", c.from, c.to, got, err, want)
		}
		if _, err := ns.Delete(k); err != nil {
			t.Fatalf("answers %d-%d lost: delete: %v", c.from, c.to, err)
		}
		o.Close()
	}
}

// TestDeadWriterPendingWindow: a writer that dies after creating its
// pending head leaves the key taken for the rest of its pending window
// (its operation's deadline) plus ClockSkew, no longer: a Create from
// another process is refused while the writer could still be working
// (exists), and succeeds right after. Before pending windows it was
// refused for ten minutes.
func TestDeadWriterPendingWindow(t *testing.T) {
	const timeout = 3 * time.Second
	conn := connString(t)
	cfg := cas.Config{ClockSkew: time.Second}
	k := driver.MakeKey("app", 1)
	r := smallRelease("app", "dead", 1, release.StatusDeployed)
	ks := &killSwitch{limit: 1} // the head's create, then nothing
	w, _ := openTest(t, conn, options{protocol: &cfg, perCall: []policy.Policy{ks}}, helm3.WithTimeout(timeout), quiet)
	start := time.Now()
	if err := w.Namespace("dead").Create(k, r); !errors.Is(err, errDied) {
		t.Fatalf("create by a writer that dies after the head: %v", err)
	}
	w.Close()
	o, _ := openTest(t, conn, options{protocol: &cfg}, helm3.WithTimeout(timeout))
	defer o.Close()
	ns := o.Namespace("dead")
	if _, err := ns.Get(k); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("get of the dead writer's release: %v; want not found", err)
	}
	if err := ns.Create(k, r); !errors.Is(err, helm3.ErrReleaseExists) {
		t.Fatalf("create within the dead writer's pending window: %v; want exists (the writer could still be working)", err)
	}
	for {
		err := ns.Create(k, r)
		if err == nil {
			break
		}
		if !errors.Is(err, helm3.ErrReleaseExists) {
			t.Fatalf("create after the dead writer's window: %v", err)
		}
		if time.Since(start) > 3*(timeout+cfg.ClockSkew) {
			t.Fatalf("create still refused %v after the dead writer started (its window is %v, ClockSkew %v): %v",
				time.Since(start).Round(time.Millisecond), timeout, cfg.ClockSkew, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("the key was free again %v after the dead writer started (window %v, ClockSkew %v)", time.Since(start).Round(time.Millisecond), timeout, cfg.ClockSkew)
	if _, err := ns.Get(k); err != nil {
		t.Fatalf("get after the create that took over: %v", err)
	}
}
