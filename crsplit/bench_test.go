package crsplit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/fixture"
	"github.com/helmstore/helmstore/internal/testenv"
)

// The benchmarks compare crsplit with Helm's Secrets driver on the same API
// server, on the 2.2 MB release of fixture.Stack, shaped like
// kube-prometheus-stack (same chart every revision, new values, 3 of the
// manifest's 5,900 lines changed), in sub-benchmarks named
// <op>/crsplit and <op>/helm-secrets for benchstat; the read benchmarks run
// crsplit twice, as crsplit-cold (decoded-part cache off, as a fresh helm
// process sees it) and crsplit-warm (the default cache, as a long-running
// operator sees it).
//
// B/rev is what the API server stores per revision written: the serialized
// size, as stored, of every object created, updated or patched, taken from
// the response to each write. Custom resources are stored as JSON, their
// size is the response's; where crsplit asked for the metadata only (new
// parts and chunks, which never change), the object is read back after the
// operation, outside the timer, and its size counted. Secrets are stored as
// protobuf, which is what client-go (and so Helm) talks for built-in
// kinds; a JSON response would be decoded (outside the timer) and its
// protobuf size counted.

// writtenBytes records the bodies of successful write responses.
type writtenBytes struct {
	mu     sync.Mutex
	bodies []writtenBody
	rt     http.RoundTripper // to read back objects written quietly
	// size is the stored size of an object, from its JSON.
	size func(json []byte) int64
}

// writtenBody is a write's response and the request it answered.
type writtenBody struct {
	req  *http.Request
	body []byte
}

func (w *writtenBytes) wrap(rt http.RoundTripper) http.RoundTripper {
	w.rt = rt
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil && resp.StatusCode < 300 && (req.Method == http.MethodPost || req.Method == http.MethodPut || req.Method == http.MethodPatch) {
			resp.Body = &recordingBody{ReadCloser: resp.Body, w: w, req: req}
		}
		return resp, err
	})
}

// take returns the stored size of the objects written since the last call.
func (w *writtenBytes) take() int64 {
	w.mu.Lock()
	bodies := w.bodies
	w.bodies = nil
	w.mu.Unlock()
	var n int64
	for _, b := range bodies {
		n += w.size(w.stored(b))
	}
	return n
}

// stored returns the object a write stored: its response, or, for a
// response with the metadata only, the object read back.
func (w *writtenBytes) stored(b writtenBody) []byte {
	var m struct {
		Kind     string
		Metadata struct{ Name string }
	}
	if json.Unmarshal(b.body, &m) != nil || m.Kind != "PartialObjectMetadata" {
		return b.body
	}
	u := *b.req.URL
	u.Path += "/" + m.Metadata.Name
	get, _ := http.NewRequest(http.MethodGet, u.String(), nil)
	get.Header = b.req.Header.Clone()
	get.Header.Set("Accept", "application/json")
	resp, err := w.rt.RoundTrip(get)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		panic(fmt.Sprintf("read back %s: %d %v", u.Path, resp.StatusCode, err))
	}
	return raw
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// recordingBody keeps a copy of what is read through it, recorded once at
// the end of the body (client-go reads on after that, to drain it).
type recordingBody struct {
	io.ReadCloser
	w    *writtenBytes
	req  *http.Request
	buf  []byte
	done bool
}

func (r *recordingBody) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.buf = append(r.buf, p[:n]...)
	if err == io.EOF && !r.done {
		r.done = true
		r.w.mu.Lock()
		r.w.bodies = append(r.w.bodies, writtenBody{r.req, r.buf})
		r.w.mu.Unlock()
	}
	return n, err
}

func jsonSize(b []byte) int64 { return int64(len(b)) }

// secretSize is the size of a Secret as etcd stores it (protobuf).
func secretSize(b []byte) int64 {
	if bytes.HasPrefix(b, []byte("k8s\x00")) {
		return int64(len(b)) // protobuf already, envelope included
	}
	var s corev1.Secret
	if err := json.Unmarshal(b, &s); err != nil {
		panic(fmt.Sprintf("%v: %d bytes: %q", err, len(b), b[:min(len(b), 80)]))
	}
	return int64(s.Size())
}

var warmUp sync.Once

// warmUpServer writes and deletes small releases through crsplit and
// Helm's Secrets driver for a few seconds before the first benchmark: a
// freshly started API server answers the first seconds of custom resource
// writes several times slower, which would otherwise land in the first
// sample of whichever benchmark runs first.
func warmUpServer(b *testing.B, k *testenv.KubeServer) {
	ns := newNamespace(b, k)
	s, err := Open(ctxT(b), k.Config(testenv.KubeAdmin))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	cs, err := kubernetes.NewForConfig(k.Config(testenv.KubeAdmin))
	if err != nil {
		b.Fatal(err)
	}
	stores := []*storage.Storage{storage.Init(s.Namespace(ns)), storage.Init(helmdriver.NewSecrets(cs.CoreV1().Secrets(ns)))}
	for i, end := 0, time.Now().Add(5*time.Second); time.Now().Before(end); i++ {
		for _, st := range stores {
			r := smallRelease("warm", ns, i+1, "warm")
			if err := st.Create(r); err != nil {
				b.Fatal(err)
			}
			if _, err := st.Delete(r.Name, r.Version); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchDriver is one side of a comparison.
type benchDriver struct {
	name    string
	driver  helmdriver.Driver
	written *writtenBytes
	// settle waits for work a driver does after an operation returns
	// (crsplit's background commits), so that its bytes are counted.
	settle func()
}

// benchDrivers returns crsplit (or crsplit-cold and crsplit-warm) and
// Helm's Secrets driver, each on its own fresh namespace of the shared
// server.
func benchDrivers(b *testing.B, coldWarm bool) []benchDriver {
	k := cluster(b)
	warmUp.Do(func() { warmUpServer(b, k) })
	var out []benchDriver
	mk := func(name string, opts ...driver.Option) {
		ns := newNamespace(b, k)
		w := &writtenBytes{size: jsonSize}
		cfg := k.Config(testenv.KubeAdmin)
		cfg.Wrap(w.wrap)
		s, err := Open(ctxT(b), cfg, opts...)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		b := kubeBackendOf(s)
		out = append(out, benchDriver{name, s.Namespace(ns), w, b.WaitCommits})
	}
	if coldWarm {
		mk("crsplit-cold", driver.WithCacheBytes(0))
		mk("crsplit-warm")
	} else {
		mk("crsplit")
	}
	ns := newNamespace(b, k)
	w := &writtenBytes{size: secretSize}
	cfg := k.Config(testenv.KubeAdmin) // as Helm's client: client-go's defaults
	cfg.Wrap(w.wrap)
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		b.Fatal(err)
	}
	out = append(out, benchDriver{"helm-secrets", helmdriver.NewSecrets(cs.CoreV1().Secrets(ns)), w, func() {}})
	return out
}

// stack is the chart shaped like kube-prometheus-stack that the benchmarks
// store (2.2 MB of release JSON, 89% chart; see fixture.Stack).
var stack = sync.OnceValue(func() *fixture.Stack { return fixture.NewStack(1) })

// revisions holds generated revisions by version, for any release name
// (the name in a revision's manifest is always "bench"), generated outside
// the timer.
var revisions sync.Map // int -> *release.Release

// revision returns revision v of release name: a values-only upgrade of
// revision v-1 (same chart, new values, 3 of the manifest's 5,900 lines
// changed), deployed.
func revision(name string, v int) *release.Release {
	cached, ok := revisions.Load(v)
	if !ok {
		cached, _ = revisions.LoadOrStore(v, stack().Release("bench", "", v))
	}
	r := *cached.(*release.Release)
	info := *r.Info
	r.Name, r.Info = name, &info
	return &r
}

// historyMax is Helm's default --history-max.
const historyMax = 10

// BenchmarkCreate stores revision after revision of one release (each a
// values-only upgrade: same chart, new values, 3 manifest lines changed), keeping at
// most historyMax revisions (pruned outside the timer).
func BenchmarkCreate(b *testing.B) {
	benchRevisions(b, func(st *storage.Storage, name string, v int) error {
		return st.Create(revision(name, v))
	})
}

// BenchmarkUpgrade writes what `helm upgrade` writes to storage: the new
// revision (pending-upgrade), the previous one marked superseded, the new
// one marked deployed.
func BenchmarkUpgrade(b *testing.B) {
	benchRevisions(b, func(st *storage.Storage, name string, v int) error {
		r := revision(name, v)
		r.Info.Status = release.StatusPendingUpgrade
		if err := st.Create(r); err != nil {
			return err
		}
		prev := revision(name, v-1)
		prev.Info.Status = release.StatusSuperseded
		if err := st.Update(prev); err != nil {
			return err
		}
		r.Info.Status = release.StatusDeployed
		return st.Update(r)
	})
}

// benchRevisions times write, which stores revision v (2, 3, ...) of a
// release whose revision 1 is stored, on each driver, keeping at most
// historyMax revisions (pruned outside the timer) and reporting the bytes
// the API server stored per revision.
func benchRevisions(b *testing.B, write func(st *storage.Storage, name string, v int) error) {
	for _, d := range benchDrivers(b, false) {
		b.Run(d.name, func(b *testing.B) {
			st := storage.Init(d.driver)
			name := freshName()
			for v := 1; v <= b.N+1; v++ {
				revision(name, v) // generated outside the timer
			}
			if err := st.Create(revision(name, 1)); err != nil {
				b.Fatal(err)
			}
			d.settle()
			d.written.take()
			var written int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				v := i + 2
				if err := write(st, name, v); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				d.settle()
				written += d.written.take()
				if v > historyMax {
					if _, err := st.Delete(name, v-historyMax); err != nil {
						b.Fatal(err)
					}
				}
				d.written.take()
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(float64(written)/float64(b.N), "B/rev")
			deleteRevisions(b, st, name, b.N+1)
		})
	}
}

// history stores n revisions of a new release, the last one deployed, and
// returns its name.
func history(b *testing.B, d helmdriver.Driver, n int) string {
	st := storage.Init(d)
	name := freshName()
	for v := 1; v <= n; v++ {
		r := revision(name, v)
		if v < n {
			r.Info.Status = release.StatusSuperseded
		}
		if err := st.Create(r); err != nil {
			b.Fatal(err)
		}
	}
	return name
}

// deleteRevisions deletes what is left of the revisions 1..last of name, so
// that the next run of a benchmark (-count, or the testing package's own
// reruns) starts from the same state: otherwise the shared chart would
// carry the owners of every earlier run.
func deleteRevisions(b *testing.B, st *storage.Storage, name string, last int) {
	for v := 1; v <= last; v++ {
		if _, err := st.Delete(name, v); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
			b.Fatal(err)
		}
	}
}

var benchRuns atomic.Int64

// freshName names a release no earlier run of a benchmark used (the
// testing package runs each benchmark function more than once).
func freshName() string { return fmt.Sprintf("app%d", benchRuns.Add(1)) }

// BenchmarkGet reads the latest of 20 revisions.
func BenchmarkGet(b *testing.B) {
	for _, d := range benchDrivers(b, true) {
		b.Run(d.name, func(b *testing.B) {
			name := history(b, d.driver, 20)
			k := key(name, 20)
			d.driver.Get(k) // warms crsplit-warm's cache
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := d.driver.Get(k)
				if err != nil || r.Chart == nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			deleteRevisions(b, storage.Init(d.driver), name, 20)
		})
	}
}

// BenchmarkHistory reads the 20 revisions of a release, as `helm history`
// and every `helm upgrade` do.
func BenchmarkHistory(b *testing.B) {
	for _, d := range benchDrivers(b, true) {
		b.Run(d.name, func(b *testing.B) {
			name := history(b, d.driver, 20)
			st := storage.Init(d.driver)
			st.History(name) // warms crsplit-warm's cache
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rs, err := st.History(name)
				if err != nil || len(rs) != 20 {
					b.Fatal(fmt.Sprint(len(rs)), err)
				}
			}
			b.StopTimer()
			deleteRevisions(b, st, name, 20)
		})
	}
}

// BenchmarkDeployed finds the deployed revision among 20, as `helm upgrade`,
// `helm status` and `helm get` do.
func BenchmarkDeployed(b *testing.B) {
	for _, d := range benchDrivers(b, true) {
		b.Run(d.name, func(b *testing.B) {
			name := history(b, d.driver, 20)
			st := storage.Init(d.driver)
			st.Deployed(name) // warms crsplit-warm's cache
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := st.Deployed(name)
				if err != nil || r.Version != 20 {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			deleteRevisions(b, st, name, 20)
		})
	}
}
