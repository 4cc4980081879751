package drivertest

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// lostReplyTimeout bounds each operation of the store whose replies the
// suite loses: a client that waits for a reply it will never get (instead of
// seeing its connection closed) fails within it.
const lostReplyTimeout = 20 * time.Second

// maxLostReplies bounds the messages one write may send before the test
// gives up on seeing it complete (a write that keeps failing after a lost
// reply, or that sends without end).
const maxLostReplies = 500

// lostReplyCase is a write whose reply the suite loses: the namespace's
// releases before and after it, the write, the answer its second attempt
// must give, and how the suite goes back from after to before.
type lostReplyCase struct {
	name          string
	before, after []*release.Release
	// write runs the call on s, returning the release Delete returns.
	write func(s helm3.Store) (*release.Release, error)
	// returns is the release a Delete that succeeded must return.
	returns *release.Release
	// retry checks the second attempt of the call, on s, whose first
	// attempt applied (or not).
	retry func(t *testing.T, s helm3.Store, applied bool)
	// undo takes the store from after back to before, through s.
	undo func(t *testing.T, s helm3.Store)
}

func lostReplyCases() []lostReplyCase {
	// keep and app share their chart and values; app's manifest and the
	// values and manifest of app's update are their own.
	keep := rel("keep", "default", 1, release.StatusDeployed)
	keep.Config = map[string]interface{}{"shared": "values"}
	keep.Labels = map[string]string{"team": "x"}
	app := rel("app", "default", 1, release.StatusDeployed)
	app.Config = map[string]interface{}{"shared": "values"}
	app.Labels = map[string]string{"team": "x"}
	updated := rel("app", "default", 1, release.StatusSuperseded)
	updated.Config = map[string]interface{}{"own": "values"}
	updated.Manifest = "# updated\n" + updated.Manifest
	updated.Labels = map[string]string{"team": "y"}
	k := key("app", 1)
	create := func(t *testing.T, s helm3.Store, r *release.Release) {
		t.Helper()
		if err := s.Create(k, r); err != nil {
			t.Fatalf("create %s: %v", k, err)
		}
	}
	return []lostReplyCase{
		{
			name:   "Create",
			before: []*release.Release{keep}, after: []*release.Release{keep, app},
			write: func(s helm3.Store) (*release.Release, error) { return nil, s.Create(k, app) },
			retry: func(t *testing.T, s helm3.Store, applied bool) {
				err := s.Create(k, app)
				if applied && !errors.Is(err, helm3.ErrReleaseExists) || !applied && err != nil {
					t.Fatalf("second Create, the first having applied: %v: %v", applied, err)
				}
			},
			undo: func(t *testing.T, s helm3.Store) {
				if _, err := s.Delete(k); err != nil {
					t.Fatalf("undo: delete %s: %v", k, err)
				}
			},
		},
		{
			name:   "Update",
			before: []*release.Release{keep, app}, after: []*release.Release{keep, updated},
			write: func(s helm3.Store) (*release.Release, error) { return nil, s.Update(k, updated) },
			retry: func(t *testing.T, s helm3.Store, applied bool) {
				if err := s.Update(k, updated); err != nil {
					t.Fatalf("second Update: %v", err)
				}
			},
			undo: func(t *testing.T, s helm3.Store) {
				if err := s.Update(k, app); err != nil {
					t.Fatalf("undo: update %s: %v", k, err)
				}
			},
		},
		{
			name:   "Delete",
			before: []*release.Release{keep, app}, after: []*release.Release{keep},
			write:   func(s helm3.Store) (*release.Release, error) { return s.Delete(k) },
			returns: app,
			retry: func(t *testing.T, s helm3.Store, applied bool) {
				got, err := s.Delete(k)
				if applied {
					if !errors.Is(err, helm3.ErrReleaseNotFound) {
						t.Fatalf("second Delete, the first having applied: %v", err)
					}
					return
				}
				if err != nil {
					t.Fatalf("second Delete, the first not having applied: %v", err)
				}
				sameRelease(t, "second Delete", got, app)
			},
			undo: func(t *testing.T, s helm3.Store) { create(t, s, app) },
		},
	}
}

// testLostReply loses the reply to each message a write sends in turn (the
// server applied it; the client never hears so) and checks that the call
// says so honestly (nil, or driver.ErrUnavailable; never "not found" or
// "exists" for its own effect, never corrupt), that a fresh store then
// sees the write wholly done or wholly undone, with exact part counts, and
// that the user's second attempt answers as that state says.
func testLostReply(t *testing.T, h Harness) {
	if h.Proxied == nil {
		t.Skip("Harness.Proxied is not set: the driver cannot be checked against replies lost after the server applied a write")
	}
	for _, c := range lostReplyCases() {
		t.Run(c.name, func(t *testing.T) { lostReply(t, h, c) })
	}
}

func lostReply(t *testing.T, h Harness, c lostReplyCase) {
	s := h.open(t)
	for _, r := range c.before {
		mustCreate(t, s, r)
	}
	loss := new(testenv.ReplyLoss)
	ps, err := h.Proxied(t, s, proxyAll(func(addr string) string { return testenv.NewLossyProxy(t, addr, loss).Addr }), helm3.WithTimeout(lostReplyTimeout))
	if err != nil {
		t.Fatalf("open through the proxy: %v", err)
	}
	defer ps.Close()
	cold := h.reopen(t, s, helm3.WithCacheBytes(0))
	everything := func(*release.Release) bool { return true }
	states := map[string][]string{"before": canon(t, c.before), "after": canon(t, c.after)}
	// state returns the state a fresh store sees (the same through its
	// namespace and through all namespaces), checking its part counts.
	state := func(what string) string {
		t.Helper()
		list, err := cold.List(everything)
		if err != nil {
			t.Fatalf("%s: List: %v", what, err)
		}
		got := canon(t, list)
		st := describeState(got, states)
		if st == "" {
			t.Fatalf("%s: a fresh store sees neither the state before the %s nor the state after it:%s", what, c.name, stateDiff(got, states))
		}
		want := c.before
		if st == "after" {
			want = c.after
		}
		wantStats(t, what, cold, want)
		if all, err := cold.Namespace("").List(everything); err != nil || describeState(canon(t, all), states) != st {
			t.Fatalf("%s: the namespace's List sees the state %s, the all-namespaces List %s, %v", what, st, joinKeys(all), err)
		}
		return st
	}
	if st := state("before the write"); st != "before" {
		t.Fatalf("the seeded store is in the state %s", st)
	}
	applied := 0 // lost replies whose write had applied
	for k := 1; ; k++ {
		if k > maxLostReplies {
			t.Fatalf("the %s still had a reply lost at message %d", c.name, k)
		}
		loss.Arm(k)
		got, err := c.write(ps)
		lost := loss.Disarm()
		what := c.name
		if lost {
			what += " whose reply to message " + strconv.Itoa(k) + " was lost"
		}
		if err != nil && (!errors.Is(err, helm3.ErrUnavailable) || errors.Is(err, helm3.ErrReleaseNotFound) ||
			errors.Is(err, helm3.ErrReleaseExists) || errors.Is(err, helm3.ErrCorrupt)) {
			t.Fatalf("%s: %v; want nil or helm3.ErrUnavailable", what, err)
		}
		if err != nil && !lost {
			t.Fatalf("%s with nothing lost: %v", c.name, err)
		}
		if err == nil && c.returns != nil {
			sameRelease(t, what+": the release returned", got, c.returns)
		}
		st := state(what)
		if err == nil && st != "after" {
			t.Fatalf("%s returned nil, but a fresh store sees the state before it", what)
		}
		if lost && st == "after" {
			applied++
		}
		c.retry(t, ps, st == "after")
		if st := state(what + ", then attempted again"); st != "after" {
			t.Fatalf("%s, then attempted again: a fresh store sees the state %s", what, st)
		}
		if err := helm3.Collect(context.Background(), cold.Namespace("")); err != nil {
			t.Fatalf("%s, then attempted again: collect: %v", what, err)
		}
		if st := state(what + ", then attempted again and collected"); st != "after" {
			t.Fatalf("%s, then attempted again and collected: a fresh store sees the state %s", what, st)
		}
		if !lost {
			t.Logf("the %s completed at message %d; of the %d replies lost before, %d were to a write that had applied", c.name, k, k-1, applied)
			return
		}
		c.undo(t, s)
		if st := state(what + ", then undone"); st != "before" {
			t.Fatalf("%s, then undone: a fresh store sees the state %s", what, st)
		}
	}
}

// proxyAll returns a ProxyFunc that gives each address one proxy, made by
// start the first time the store dials it.
func proxyAll(start func(addr string) string) ProxyFunc {
	var mu sync.Mutex
	proxies := map[string]string{}
	return func(addr string) string {
		mu.Lock()
		defer mu.Unlock()
		p, ok := proxies[addr]
		if !ok {
			p = start(addr)
			proxies[addr] = p
		}
		return p
	}
}
