package cosmos

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptrace"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)

// counter counts the HTTP round trips a store makes, the sequential steps
// they took, and the request charge (RU, from the x-ms-request-charge
// header) the service reports.
type counter struct {
	trips     atomic.Int64
	milliRU   atomic.Int64
	throttled atomic.Int64
	conns     atomic.Int64

	mu sync.Mutex
	// done is the deepest step of the requests finished so far; steps the
	// deepest of all.
	done, steps int
}

// Steps returns the sequential round-trip steps since the last Reset: the
// longest chain of requests each sent after the one before it was
// answered. Requests in flight together count as one step: it is the
// latency an operation pays, in round trips.
func (c *counter) Steps() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.steps
}

// start returns the step of a request being sent now.
func (c *counter) start() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	d := c.done + 1
	c.steps = max(c.steps, d)
	return d
}

// finish records that a request of step d was answered.
func (c *counter) finish(d int) {
	c.mu.Lock()
	c.done = max(c.done, d)
	c.mu.Unlock()
}

// RoundTrips returns the HTTP requests sent so far.
func (c *counter) RoundTrips() int64 { return c.trips.Load() }

// RequestCharge returns the request units the service reported so far.
func (c *counter) RequestCharge() float64 { return float64(c.milliRU.Load()) / 1000 }

// Connections returns the connections opened so far (each a TCP connect
// and TLS handshake: round trips that RoundTrips does not count). A client
// reusing its connections opens about as many as it sends requests at once.
func (c *counter) Connections() int64 { return c.conns.Load() }

// Throttled returns the 429 answers received so far.
func (c *counter) Throttled() int64 { return c.throttled.Load() }

// Reset sets the counts to zero.
func (c *counter) Reset() {
	c.trips.Store(0)
	c.milliRU.Store(0)
	c.throttled.Store(0)
	c.conns.Store(0)
	c.mu.Lock()
	c.done, c.steps = 0, 0
	c.mu.Unlock()
}

// countingTransport is the HTTP transport of the SDK, counting.
type countingTransport struct {
	next policy.Transporter
	c    *counter
}

func (t countingTransport) Do(req *http.Request) (*http.Response, error) {
	if t.c == nil {
		return t.next.Do(req)
	}
	trace := &httptrace.ClientTrace{GotConn: func(info httptrace.GotConnInfo) {
		if !info.Reused {
			t.c.conns.Add(1)
		}
	}}
	req = req.WithContext(httptrace.WithClientTrace(req.Context(), trace))
	step := t.c.start()
	resp, err := t.next.Do(req)
	t.c.finish(step)
	{
		t.c.trips.Add(1)
		if err == nil {
			if f, perr := strconv.ParseFloat(resp.Header.Get("x-ms-request-charge"), 64); perr == nil {
				t.c.milliRU.Add(int64(f * 1000))
			}
			if resp.StatusCode == http.StatusTooManyRequests {
				t.c.throttled.Add(1)
			}
		}
	}
	return resp, err
}

// httpClient is the transport under the SDK: Go's, with TLS verification
// off only when the connection string says InsecureSkipVerify=true. redial,
// if set, maps every address the transport dials ("host:port") to the one it
// dials instead (tests: the account endpoint and every regional endpoint the
// account properties name go through the suite's proxies).
func httpClient(insecure bool, redial func(addr string) string) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	if redial != nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return d.DialContext(ctx, network, redial(addr))
		}
	}
	if insecure {
		tr.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // asked for by the connection string
	}
	return &http.Client{Transport: tr, Timeout: 5 * time.Minute}
}

// throttlePolicy retries a request the service answered 429 (request rate
// too large) after the delay the service asks for (x-ms-retry-after-ms),
// for as long as the request's context allows: a 429 means the request was
// not executed, so it is safe to send again, write or not. It gives the 429
// back only when the context would end before the delay.
type throttlePolicy struct{}

func (throttlePolicy) Do(req *policy.Request) (*http.Response, error) {
	ctx := req.Raw().Context()
	for {
		resp, err := req.Clone(ctx).Next()
		if err != nil || resp.StatusCode != http.StatusTooManyRequests {
			return resp, err
		}
		delay := 100 * time.Millisecond
		if ms, perr := strconv.ParseFloat(resp.Header.Get("x-ms-retry-after-ms"), 64); perr == nil && ms >= 0 {
			delay = time.Duration(ms * float64(time.Millisecond))
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < delay {
			return resp, nil
		}
		resp.Body.Close()
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		if err := req.RewindBody(); err != nil {
			return nil, err
		}
	}
}
