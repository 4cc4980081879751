package drivertest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// deadline is the operation bound of the stores the Deadlines tests open
// through a blackholed path; a call taking more than three times as long
// fails.
const deadline = 2 * time.Second

// connectBound is what the deadline test allows a backend to take to give
// up making a connection to a server that never answers, when no timeout
// is set: half the operation's default bound (driver.DefaultTimeout), so
// that a backend whose connection attempts only the operation's bound
// ends fails (PostgreSQL, MySQL, Redis and crsplit give up after 5-10 s,
// Cosmos DB's client after its retries, about 40 s).
const connectBound = driver.DefaultTimeout / 2

// testDeadlines opens stores through a network path that stops answering
// without closing anything (testenv.Blackhole): Open, every operation and
// Close must give up within their bound, with driver.ErrUnavailable, never
// hang until the operating system's TCP timeouts (minutes), never say "not
// found".
func testDeadlines(t *testing.T, h Harness) {
	if h.Proxied == nil {
		t.Skip("Harness.Proxied is not set: the driver cannot be checked against a network path that stops answering")
	}
	s := h.open(t)
	mustCreate(t, s, rel("app", "default", 1, release.StatusDeployed))
	// holes returns a ProxyFunc of blackholes, holed from the start or
	// not, and a function that holes them all.
	holes := func(holed bool) (ProxyFunc, func()) {
		var mu sync.Mutex
		var all []*testenv.Blackhole
		proxy := proxyAll(func(addr string) string {
			b := testenv.NewBlackhole(t, addr)
			if holed {
				b.Hole()
			}
			mu.Lock()
			all = append(all, b)
			mu.Unlock()
			return b.Addr
		})
		return proxy, func() {
			mu.Lock()
			defer mu.Unlock()
			for _, b := range all {
				b.Hole()
			}
		}
	}
	within := func(t *testing.T, what string, call func() error) error {
		t.Helper()
		start := time.Now()
		err := call()
		if took := time.Since(start); took > 3*deadline {
			t.Fatalf("%s took %v; want it to give up within about %v (its bound)", what, took.Round(time.Millisecond), deadline)
		}
		return err
	}
	unavailable := func(t *testing.T, what string, err error) {
		t.Helper()
		if !errors.Is(err, helm3.ErrUnavailable) || errors.Is(err, helm3.ErrReleaseNotFound) || errors.Is(err, helm3.ErrReleaseExists) {
			t.Fatalf("%s: %v; want helm3.ErrUnavailable", what, err)
		}
	}
	t.Run("Open", func(t *testing.T) {
		proxy, _ := holes(true)
		var ps helm3.Store
		err := within(t, "Open through a blackholed path", func() (err error) {
			ps, err = h.Proxied(t, s, proxy, helm3.WithTimeout(deadline))
			return err
		})
		if err == nil {
			ps.Close()
			t.Fatal("Open through a blackholed path succeeded; want it to check its connection and fail")
		}
		unavailable(t, "Open through a blackholed path", err)
	})
	t.Run("OpenWithoutTimeout", func(t *testing.T) {
		// A server that accepts connections and never answers (a hung
		// server, a proxy with no backend), with no timeout set: making a
		// connection is bounded by the backend's own connect bound (a
		// dial, TLS and handshake timeout), well within the operation's
		// (driver.DefaultTimeout), as libpq's connect_timeout is. Once per
		// harness: the face does not change it.
		if h.on != nil && h.on != helm3Face {
			t.Skip("checked on the Helm 3 face")
		}
		proxy, _ := holes(true)
		start := time.Now()
		ps, err := h.Proxied(t, s, proxy)
		if took := time.Since(start); took > connectBound {
			t.Errorf("Open through a silent server, no timeout set, took %v; want the backend to give up on making a connection within %v (the operation's own bound is %v)",
				took.Round(time.Millisecond), connectBound, driver.DefaultTimeout)
		}
		if err == nil {
			ps.Close()
			t.Fatal("Open through a silent server succeeded; want it to check its connection and fail")
		}
		unavailable(t, "Open through a silent server", err)
	})
	t.Run("Operations", func(t *testing.T) {
		proxy, hole := holes(false)
		ps, err := h.Proxied(t, s, proxy, helm3.WithTimeout(deadline))
		if err != nil {
			t.Fatalf("open through the proxy: %v", err)
		}
		closed := false
		defer func() {
			if !closed {
				ps.Close()
			}
		}()
		if _, err := ps.Get(key("app", 1)); err != nil {
			t.Fatalf("Get before the path is blackholed: %v", err)
		}
		hole()
		k := key("app", 1)
		for _, c := range []struct {
			what string
			call func() error
		}{
			{"Get", func() error { _, err := ps.Get(k); return err }},
			{"List of all namespaces", func() error {
				_, err := ps.Namespace("").List(func(*release.Release) bool { return true })
				return err
			}},
			{"Create", func() error { return ps.Create(key("other", 1), rel("other", "default", 1, release.StatusDeployed)) }},
			{"Delete", func() error { _, err := ps.Delete(k); return err }},
		} {
			what := c.what + " on a store whose path is blackholed"
			unavailable(t, what, within(t, what, c.call))
		}
		within(t, "Close of a store whose path is blackholed", ps.Close)
		closed = true
	})
}
