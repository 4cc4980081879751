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
	rspb "helm.sh/helm/v4/pkg/release/v1"
	helm4driver "helm.sh/helm/v4/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	_ "github.com/helmstore/helmstore/encryption"
	"github.com/helmstore/helmstore/internal/testing/benchmarks"
	"github.com/helmstore/helmstore/internal/testing/castest"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// The benchmarks compare crsplit with Helm's Secrets driver on the same API
// server, on the 2.2 MB release of fixture.Stack, shaped like
// kube-prometheus-stack (same chart every revision, new values, 3 of the
// manifest's 5,900 lines changed), in sub-benchmarks named
// <op>/crsplit/face=<helm3|helm4> and <op>/helm-secrets/face=<...> for
// benchstat (face=helm4: crsplit through package helm4, Helm 4's Secrets
// driver); the read benchmarks run
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
func warmUpServer(b *testing.B, k *kubeenv.Server) {
	ns := newNamespace(b, k)
	s, err := openStore(ctxT(b), k.Config(kubeenv.Admin))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	cs, err := kubernetes.NewForConfig(k.Config(kubeenv.Admin))
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

var bench = benchmarks.Bench{Targets: benchTargets, Revisions: revisionsOf}

// benchTargets returns crsplit (crsplit-cold and crsplit-warm for the
// reads) and Helm's Secrets driver, each through both faces (Helm 4's
// Secrets driver for face=helm4), each on its own fresh namespace of the
// shared server, opened once per benchmark; every run stores a release of
// a fresh name and deletes it after.
func benchTargets(b *testing.B) []benchmarks.Target { return targets(b, false) }

// targets are benchTargets; with encrypted, crsplit+encrypted too:
// crsplit encrypted at rest (a local key), whose namespaces are emptied
// when the benchmark ends (the package's other benchmarks list every
// namespace without the key).
func targets(b *testing.B, encrypted bool) []benchmarks.Target {
	k := cluster(b)
	warmUp.Do(func() { warmUpServer(b, k) })
	crsplitStore := func(f benchmarks.Face, cache bool, keys ...string) benchStore {
		ns := newNamespace(b, k)
		w := &writtenBytes{size: jsonSize}
		var be driver.Backend
		s := benchmarks.OpenStore(b, f, cache, func(b *testing.B, cfg *driver.Config) driver.Backend {
			rc := k.Config(kubeenv.Admin)
			rc.Wrap(w.wrap)
			cfg.Name, cfg.RESTClientGetter, cfg.EncryptionKeys = Name, rc, keys
			var err error
			if be, err = Open(ctxT(b), cfg); err != nil {
				b.Fatal(err)
			}
			return be
		})
		if len(keys) > 0 {
			b.Cleanup(func() { wipeNamespace(b, kubeBackendFor(be.(*cas.Backend)), ns) })
		}
		wait := func() { castest.WaitCommits(be.(*cas.Backend)) }
		return written(viewIn(s, ns), w, wait)
	}
	secretsStore := func(f benchmarks.Face) benchStore {
		ns := newNamespace(b, k)
		w := &writtenBytes{size: secretSize}
		cfg := k.Config(kubeenv.Admin) // as Helm's client: client-go's defaults
		cfg.Wrap(w.wrap)
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		var s benchmarks.Store
		if f == benchmarks.Helm4 {
			d := helm4driver.NewSecrets(cs.CoreV1().Secrets(ns))
			s.View4 = func(string) helm4driver.Driver { return d }
		} else {
			d := helmdriver.NewSecrets(cs.CoreV1().Secrets(ns))
			s.View = func(string) helmdriver.Driver { return d }
		}
		return written(s, w, func() {})
	}
	type stores struct{ cold, warm benchStore }
	crsplitTarget := func(name string, keys ...string) benchmarks.Target {
		byFace := map[benchmarks.Face]stores{}
		for _, f := range benchmarks.Faces {
			byFace[f] = stores{cold: crsplitStore(f, false, keys...), warm: crsplitStore(f, true, keys...)}
		}
		return benchmarks.Target{Name: name, ColdWarm: true, Open: func(b *testing.B, f benchmarks.Face, cache bool) benchmarks.Store {
			if cache {
				return run(b, byFace[f].warm)
			}
			return run(b, byFace[f].cold)
		}}
	}
	secrets := map[benchmarks.Face]benchStore{}
	for _, f := range benchmarks.Faces {
		secrets[f] = secretsStore(f)
	}
	ts := []benchmarks.Target{crsplitTarget("crsplit")}
	if encrypted {
		ts = append(ts, crsplitTarget("crsplit+encrypted", drivertest.KeyURL(b)))
	}
	return append(ts, benchmarks.Target{Name: "helm-secrets", Helm: true, Open: func(b *testing.B, f benchmarks.Face, _ bool) benchmarks.Store { return run(b, secrets[f]) }})
}

// encryption compares encryption at rest on and off: crsplit without and
// with encryption, and Helm's Secrets driver, in the same run.
var encryption = benchmarks.Bench{Targets: func(b *testing.B) []benchmarks.Target { return targets(b, true) }, Revisions: revisionsOf}

// BenchmarkEncryptedCreate is BenchmarkCreate, encryption on and off.
func BenchmarkEncryptedCreate(b *testing.B) { encryption.Create(b) }

// BenchmarkEncryptedGet is BenchmarkGet, encryption on and off.
func BenchmarkEncryptedGet(b *testing.B) { encryption.Get(b) }

// BenchmarkEncryptedHistory is BenchmarkHistory, encryption on and off.
func BenchmarkEncryptedHistory(b *testing.B) { encryption.History(b) }

// viewIn is s with every view scoped to namespace ns.
func viewIn(s benchmarks.Store, ns string) benchmarks.Store {
	if v := s.View; v != nil {
		d := v(ns)
		s.View = func(string) helmdriver.Driver { return d }
	}
	if v := s.View4; v != nil {
		d := v(ns)
		s.View4 = func(string) helm4driver.Driver { return d }
	}
	return s
}

// benchStore is a benchmark store and, through its face, what the
// benchmarks' bookkeeping does outside the timer: delete a revision, find
// the revisions of a release.
type benchStore struct {
	benchmarks.Store
	del      func(key string) error
	versions func(name string) ([]int, error)
}

// written is a benchmark store over s (one view for every namespace),
// whose bytes written w counts: each write's (after settle, which waits
// for the work a driver does after an operation returns, such as
// crsplit's background commits), not those of the revisions deleted to
// keep at most historyMax.
func written(s benchmarks.Store, w *writtenBytes, settle func()) benchStore {
	bs := benchStore{Store: s}
	if s.View4 != nil {
		d := s.View4("")
		bs.del = func(key string) error { _, err := d.Delete(key); return err }
		bs.versions = func(name string) ([]int, error) {
			rs, err := d.Query(map[string]string{"name": name, "owner": "helm"})
			if errors.Is(err, helm4driver.ErrReleaseNotFound) {
				err = nil
			}
			var vs []int
			for _, r := range rs {
				if v1, ok := r.(*rspb.Release); ok {
					vs = append(vs, v1.Version)
				} else {
					return nil, fmt.Errorf("query %s: a %T", name, r)
				}
			}
			return vs, err
		}
	} else {
		d := s.View("")
		bs.del = func(key string) error { _, err := d.Delete(key); return err }
		bs.versions = func(name string) ([]int, error) {
			rs, err := d.Query(map[string]string{"name": name, "owner": "helm"})
			if errors.Is(err, helmdriver.ErrReleaseNotFound) {
				err = nil
			}
			var vs []int
			for _, r := range rs {
				vs = append(vs, r.Version)
			}
			return vs, err
		}
	}
	var total int64
	stored := func() int64 {
		settle()
		total += w.take()
		return total
	}
	bs.Stored = stored
	bs.AfterWrite = func(b *testing.B, name string, v int) {
		stored()
		if v > historyMax {
			if err := bs.del(key(name, v-historyMax)); err != nil {
				b.Fatal(err)
			}
		}
		w.take()
	}
	return bs
}

// run is s for one run of a benchmark: a release of a fresh name, deleted
// after the run, so that the next run (-count, or the testing package's
// own reruns) starts from the same state (otherwise the shared chart would
// carry the owners of every earlier run).
func run(b *testing.B, s benchStore) benchmarks.Store {
	s.Release = freshName()
	b.Cleanup(func() {
		vs, err := s.versions(s.Release)
		if err != nil {
			b.Fatal(err)
		}
		for _, v := range vs {
			if err := s.del(key(s.Release, v)); err != nil && !errors.Is(err, helmdriver.ErrReleaseNotFound) && !errors.Is(err, helm4driver.ErrReleaseNotFound) {
				b.Fatal(err)
			}
		}
	})
	return s.Store
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

// revisionsOf returns revisions 1..n of release name (ns is the target's
// own), as revision makes them.
func revisionsOf(name, _ string, n int) []*release.Release {
	out := make([]*release.Release, n)
	for i := range out {
		out[i] = revision(name, i+1)
	}
	return out
}

// historyMax is Helm's default --history-max: the write benchmarks keep at
// most this many revisions (pruned outside the timer).
const historyMax = 10

var benchRuns atomic.Int64

// freshName names a release no earlier run of a benchmark used (the
// testing package runs each benchmark function more than once).
func freshName() string { return fmt.Sprintf("app%d", benchRuns.Add(1)) }

// BenchmarkCreate stores revision after revision of one release (each a
// values-only upgrade: same chart, new values, 3 manifest lines changed),
// keeping at most historyMax revisions.
func BenchmarkCreate(b *testing.B) { bench.Create(b) }

// BenchmarkUpgrade writes what `helm upgrade` writes to storage: the new
// revision (pending-upgrade), the previous one marked superseded, the new
// one marked deployed.
func BenchmarkUpgrade(b *testing.B) { bench.Upgrade(b) }

// BenchmarkGet reads the latest of 20 revisions.
func BenchmarkGet(b *testing.B) { bench.Get(b) }

// BenchmarkHistory reads the 20 revisions of a release, as `helm history`
// and every `helm upgrade` do.
func BenchmarkHistory(b *testing.B) { bench.History(b) }

// BenchmarkDeployed finds the deployed revision among 20, as `helm upgrade`,
// `helm status` and `helm get` do.
func BenchmarkDeployed(b *testing.B) { bench.Deployed(b) }
