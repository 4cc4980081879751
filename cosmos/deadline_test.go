package cosmos

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// holeAt blackholes the path of a client before the n-th request it sends
// (the SDK's own account read included).
type holeAt struct {
	n    int64
	sent atomic.Int64
	hole func()
}

func (h *holeAt) Do(req *policy.Request) (*http.Response, error) {
	if h.sent.Add(1) == h.n {
		h.hole()
	}
	return req.Next()
}

// blackholes returns a ProxyFunc that gives each address a blackhole of its
// own, and a function that holes them all.
func blackholes(t *testing.T) (func(addr string) string, func()) {
	var mu sync.Mutex
	holes := map[string]*testenv.Blackhole{}
	return func(addr string) string {
			mu.Lock()
			defer mu.Unlock()
			b, ok := holes[addr]
			if !ok {
				b = testenv.NewBlackhole(t, addr)
				holes[addr] = b
			}
			return b.Addr
		}, func() {
			mu.Lock()
			defer mu.Unlock()
			for _, b := range holes {
				b.Hole()
			}
		}
}

// TestOpenDeadline opens a store on a new container (Open reads the account,
// reads the container, creates the database and the container) with
// WithTimeout(5s) through a path that stops answering before its first
// request, its second, and so on: each Open gives up within three times its
// timeout, with driver.ErrUnavailable. (Issue 22 item 13: through a path
// blackholed from the start, Open failed after 43 s, the SDK's account read
// retried on a context of its own.)
func TestOpenDeadline(t *testing.T) {
	const timeout = 5 * time.Second
	for n := int64(1); ; n++ {
		if n > 16 {
			t.Fatal("Open still made a request to hole after 15 (it makes four)")
		}
		proxy, hole := blackholes(t)
		conn, redial, err := proxiedConnString(connString(t), proxy)
		if err != nil {
			t.Fatal(err)
		}
		h := &holeAt{n: n, hole: hole}
		start := time.Now()
		s, _, err := tryOpen(conn, options{redial: redial, perCall: []policy.Policy{h}}, helm3.WithTimeout(timeout))
		took := time.Since(start)
		if err == nil {
			s.Close()
			if h.sent.Load() >= n {
				t.Fatalf("Open succeeded through a path blackholed before its request %d", n)
			}
			t.Logf("Open sent %d requests", h.sent.Load())
			return
		}
		t.Logf("blackholed before request %d: Open failed after %v: %v", n, took.Round(time.Millisecond), err)
		if took > 3*timeout {
			t.Errorf("blackholed before request %d: Open took %v; want it to give up within about %v (WithTimeout)", n, took.Round(time.Millisecond), timeout)
		}
		if !errors.Is(err, helm3.ErrUnavailable) {
			t.Errorf("blackholed before request %d: Open: %v; want helm3.ErrUnavailable", n, err)
		}
	}
}
