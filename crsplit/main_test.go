package crsplit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/casprobe"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/envelope"
	"github.com/helmstore/helmstore/internal/testing/castest"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// TestMain builds (or finds) etcd and the Kubernetes binaries before the
// test timer starts, and stops the shared API server after the tests.
func TestMain(m *testing.M) {
	if _, err := kubeenv.Binaries(); err != nil {
		fmt.Fprintf(os.Stderr, "crsplit tests: no etcd or Kubernetes binaries: %v\n", err)
	}
	code := m.Run()
	kubeenv.Stop()
	os.Exit(code)
}

var crds struct {
	once sync.Once
	err  error
}

// cluster returns the package's API server with the CRDs installed.
func cluster(t testing.TB) *kubeenv.Server {
	t.Helper()
	k := kubeenv.Kube(t)
	crds.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		crds.err = InstallCRDs(ctx, k.Config(kubeenv.Admin))
	})
	if crds.err != nil {
		t.Fatalf("install CRDs: %v", crds.err)
	}
	return k
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func kubeClient(t testing.TB, k *kubeenv.Server, user string) kubernetes.Interface {
	t.Helper()
	cs, err := kubernetes.NewForConfig(k.Config(user))
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// ensureNamespace creates namespace ns if it does not exist.
func ensureNamespace(t testing.TB, k *kubeenv.Server, ns string) {
	t.Helper()
	_, err := kubeClient(t, k, kubeenv.Admin).CoreV1().Namespaces().Create(ctxT(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// newNamespace creates a namespace no other test uses.
func newNamespace(t testing.TB, k *kubeenv.Server) string {
	t.Helper()
	ns := testenv.UniqueName("hs-")
	ensureNamespace(t, k, ns)
	return ns
}

// openAs opens a store as user, scoped to ns, and returns its backend too.
func openAs(t testing.TB, k *kubeenv.Server, user, ns string, opts ...helm3.Option) (helm3.Store, *kubeBackend) {
	t.Helper()
	s, err := openStore(ctxT(t), k.Config(user), append([]helm3.Option{helm3.WithLog(t.Logf)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s.Namespace(ns), kubeBackendOf(s)
}

// rawObjects returns every object of res in ns, as stored (JSON), once
// b's background commits are done.
func rawObjects(t testing.TB, b *kubeBackend, res, ns string) []json.RawMessage {
	t.Helper()
	b.WaitCommits()
	raws, err := b.c.list(ctxT(t), res, ns, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return raws
}

// assertNoObjects fails t if any object of the backend's kinds is in ns.
func assertNoObjects(t testing.TB, b *kubeBackend, ns, when string) {
	t.Helper()
	for _, res := range allResources {
		if n := count(t, b, res, ns); n != 0 {
			t.Fatalf("%d %s %s", n, res, when)
		}
	}
}

// count returns the number of objects of res in ns.
func count(t testing.TB, b *kubeBackend, res, ns string) int {
	t.Helper()
	return len(rawObjects(t, b, res, ns))
}

// meta decodes the metadata of a raw object.
func meta(t testing.TB, raw json.RawMessage) metav1.ObjectMeta {
	t.Helper()
	var o struct {
		Metadata metav1.ObjectMeta `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &o); err != nil {
		t.Fatal(err)
	}
	return o.Metadata
}

// waitUntil polls cond for up to a minute, failing t if it stays false.
func waitUntil(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// kubeBackend is a store's protocol backend with its Kubernetes client and
// test hooks.
type kubeBackend struct {
	*cas.Backend
	c     *client
	hooks *casprobe.Hooks
}

// kubeBackendOf returns the backend of a crsplit store.
func kubeBackendOf(s helm3.Store) *kubeBackend {
	return kubeBackendFor(envelope.Under(engine.Of(s).Backend()).(*cas.Backend))
}

// kubeBackendFor is the test's view of b, a backend this package opened.
func kubeBackendFor(b *cas.Backend) *kubeBackend {
	p := castest.Probe(b)
	return &kubeBackend{Backend: b, c: p.Store.(*kubeStore).c, hooks: &p.Hooks}
}

// WaitCommits returns once no background work of b is running.
func (b *kubeBackend) WaitCommits() { castest.WaitCommits(b.Backend) }

// SetPendingTimeout changes b's pending timeout (0: every pending Release
// it meets is abandoned at once).
func (b *kubeBackend) SetPendingTimeout(d time.Duration) {
	castest.Probe(b.Backend).SetPendingTimeout(d)
}

// ReadChunks reads and joins the named Chunks of ns as the protocol does.
func (b *kubeBackend) ReadChunks(ctx context.Context, ns string, names []string) ([]byte, error) {
	return castest.Probe(b.Backend).ReadChunks(ctx, ns, names)
}
