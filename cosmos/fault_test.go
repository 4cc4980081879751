package cosmos

import (
	"bytes"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv/cosmosenv"
)

// faultProxy is an HTTPS reverse proxy in front of the test server that
// answers 429 (with x-ms-retry-after-ms) or cuts the connection on demand.
type faultProxy struct {
	srv      *httptest.Server
	throttle atomic.Int64 // answer this many requests 429
	always   atomic.Bool  // answer every request 429
	cut      atomic.Bool  // close every connection without an answer
	served   atomic.Int64
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.Transport = &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	p := &faultProxy{}
	// The account's metadata (GET /) names the server's own address as its
	// read and write locations, which the SDK then uses: point them at the
	// proxy.
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.URL.Path != "/" && resp.Request.URL.Path != "" {
			return nil
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		b = bytes.ReplaceAll(b, []byte(strings.TrimSuffix(target, "/")), []byte(p.srv.URL))
		resp.Body = io.NopCloser(bytes.NewReader(b))
		resp.ContentLength = int64(len(b))
		resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		return nil
	}
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.served.Add(1)
		if p.cut.Load() {
			if hj, ok := w.(http.Hijacker); ok {
				if c, _, err := hj.Hijack(); err == nil {
					c.Close()
					return
				}
			}
			panic(http.ErrAbortHandler)
		}
		if p.always.Load() || p.throttle.Add(-1) >= 0 {
			w.Header().Set("x-ms-retry-after-ms", "20")
			w.Header().Set("x-ms-substatus", "3200")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"code":"TooManyRequests","message":"Request rate is large"}`))
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// proxied returns conn with its endpoint replaced by the proxy's.
func (p *faultProxy) proxied(conn string) string {
	i := strings.Index(conn, "AccountEndpoint=")
	j := strings.Index(conn[i:], ";")
	return conn[:i] + "AccountEndpoint=" + p.srv.URL + "/" + conn[i+j:]
}

func smallRelease(name, ns string, v int, status release.Status) *release.Release {
	r := fixture.ValuesOnlyRelease(name, ns, v)
	r.Chart.Templates = r.Chart.Templates[:1]
	r.Manifest = r.Manifest[:2000]
	r.Info.Status = status
	return r
}

// TestThrottling: every other request of a run of Helm operations is
// answered 429; all succeed, after the retry-after. A 429 storm that
// outlasts the operation's deadline fails it as unavailable, never as "not
// found".
func TestThrottling(t *testing.T) {
	conn := connString(t)
	direct, _ := openTest(t, conn, options{}) // creates the container
	defer direct.Close()
	p := newFaultProxy(t, cosmosenv.Endpoint(t))
	var c counter
	s, _ := openTest(t, p.proxied(conn), options{counter: &c}, helm3.WithTimeout(20*time.Second))
	defer s.Close()
	ns := s.Namespace("throttle")
	for v := 1; v <= 3; v++ {
		p.throttle.Store(3)
		r := smallRelease("app", "throttle", v, release.StatusDeployed)
		if err := ns.Create(driver.MakeKey("app", v), r); err != nil {
			t.Fatalf("create v%d under throttling: %v", v, err)
		}
		p.throttle.Store(2)
		if _, err := ns.Get(driver.MakeKey("app", v)); err != nil {
			t.Fatalf("get v%d under throttling: %v", v, err)
		}
	}
	p.throttle.Store(2)
	h, err := ns.Query(map[string]string{"name": "app", "owner": "helm"})
	if err != nil || len(h) != 3 {
		t.Fatalf("history under throttling: %d releases, %v", len(h), err)
	}
	if c.Throttled() == 0 {
		t.Fatal("the proxy throttled nothing: the test tests nothing")
	}
	t.Logf("%d requests answered 429, all retried", c.Throttled())

	short, _ := openTest(t, p.proxied(conn), options{}, helm3.WithTimeout(2*time.Second))
	defer short.Close()
	p.always.Store(true)
	_, err = short.Namespace("throttle").Get(driver.MakeKey("app", 1))
	p.always.Store(false)
	if err == nil || errors.Is(err, helm3.ErrReleaseNotFound) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("get during a 429 storm past the deadline: %v; want an unavailable error, not not-found", err)
	}
	t.Logf("storm past the deadline: %v", err)
}

// TestConnectionCut: with every connection cut, reads and writes fail as
// unavailable, never as "not found"; once the network is back they work
// and nothing half-written is visible.
func TestConnectionCut(t *testing.T) {
	conn := connString(t)
	p := newFaultProxy(t, cosmosenv.Endpoint(t))
	s, _ := openTest(t, p.proxied(conn), options{}, helm3.WithTimeout(30*time.Second))
	defer s.Close()
	ns := s.Namespace("cut")
	if err := ns.Create(driver.MakeKey("app", 1), smallRelease("app", "cut", 1, release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	p.cut.Store(true)
	if _, err := ns.Get(driver.MakeKey("app", 1)); err == nil || errors.Is(err, helm3.ErrReleaseNotFound) || !errors.Is(err, ErrUnavailable) {
		t.Fatalf("get with the connection cut: %v; want unavailable, not not-found", err)
	}
	if _, err := ns.Get(driver.MakeKey("missing", 1)); err == nil || errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("get of a missing release with the connection cut: %v; want an error that is not not-found", err)
	}
	err := ns.Create(driver.MakeKey("app", 2), smallRelease("app", "cut", 2, release.StatusDeployed))
	if err == nil || errors.Is(err, helm3.ErrReleaseExists) {
		t.Fatalf("create with the connection cut: %v; want a failure that is not exists", err)
	}
	p.cut.Store(false)
	if _, err := ns.Get(driver.MakeKey("app", 1)); err != nil {
		t.Fatalf("get after the network came back: %v", err)
	}
	if _, err := ns.Get(driver.MakeKey("app", 2)); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("the create that failed with the connection cut is visible (or the read failed): %v", err)
	}
	if err := ns.Create(driver.MakeKey("app", 2), smallRelease("app", "cut", 2, release.StatusDeployed)); err != nil {
		t.Fatalf("create again after the network came back: %v", err)
	}
}
