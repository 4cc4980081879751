package crsplit

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// TestConformance runs the core conformance suite against crsplit on a
// real API server of its own (privateCluster), in parallel with the
// package's other parallel tests. Each Open starts from an empty cluster:
// every helmstore object, in every namespace, is deleted first (the suite
// lists across all namespaces). Proxied opens a store whose client dials
// the API server through the suite's proxy (over HTTP/2, as client-go
// speaks to an API server, except under LostReply); Wipe deletes every
// helmstore object behind the stores' backs; Denied opens a store with a
// token the API server does not know; Confined, a store of a user bound to
// the shipped Role in team-a alone.
func TestConformance(t *testing.T) {
	t.Parallel()
	drivertest.Run(t, harness(t, privateCluster(t)))
}

// TestConformanceEncrypted runs the core suite with encryption at rest on,
// on an API server of its own (so that no encrypted object is left for the
// package's other tests, which list every namespace without the key).
func TestConformanceEncrypted(t *testing.T) {
	t.Parallel()
	drivertest.Run(t, harness(t, privateCluster(t), helm3.WithEncryptionKeys(drivertest.KeyURL(t))))
}

// privateCluster starts an API server of t's own with the CRDs installed,
// stopped when t ends: the conformance runs wipe the whole cluster, so
// each has one to itself, and the two run at once (crsplit's tests are the
// longest of make test, and mostly wait on the API server).
func privateCluster(t *testing.T) *kubeenv.Server {
	t.Helper()
	kubeenv.Kube(t) // the shared one: reports missing binaries as every test does
	k, err := kubeenv.Start()
	if err != nil {
		t.Fatalf("start an API server: %v", err)
	}
	t.Cleanup(k.Stop)
	if err := InstallCRDs(ctxT(t), k.Config(kubeenv.Admin)); err != nil {
		t.Fatalf("install CRDs: %v", err)
	}
	return k
}

// wipeAtEnd deletes every helmstore object in the cluster when t ends.
func wipeAtEnd(t *testing.T) {
	k := cluster(t)
	t.Cleanup(func() {
		_, b := openAs(t, k, kubeenv.Admin, helm3.DefaultNamespace)
		wipe(t, b)
	})
}

// harness is the conformance harness on the API server k, every store
// opened with base.
func harness(t *testing.T, k *kubeenv.Server, base ...helm3.Option) drivertest.Harness {
	for _, ns := range drivertest.Namespaces {
		ensureNamespace(t, k, ns)
	}
	with := func(more []helm3.Option) []helm3.Option { return append(slices.Clone(base), more...) }
	return drivertest.Harness{
		// crsplit is the cas protocol, which cas's own conformance run
		// checks at 1,000 differential operations too, over objects on the
		// API server: 3,000 took 100 s a face here, the largest share of
		// make test. HELMSTORE_DIFF_OPS runs more.
		Ops: 1000,
		Open: func(t *testing.T) helm3.Store {
			s, b := openAs(t, k, kubeenv.Admin, helm3.DefaultNamespace, base...)
			wipe(t, b)
			return s
		},
		Reopen: func(t *testing.T, _ helm3.Store, opts ...helm3.Option) helm3.Store {
			s, _ := openAs(t, k, kubeenv.Admin, helm3.DefaultNamespace, with(opts)...)
			return s
		},
		Proxied: func(t *testing.T, _ helm3.Store, proxy drivertest.ProxyFunc, opts ...helm3.Option) (helm3.Store, error) {
			rc := proxiedConfig(k.Config(kubeenv.Admin), proxy)
			if strings.Contains(t.Name(), "/LostReply/") {
				// One request per connection at a time, so that each is
				// a message of its own to the proxy: over HTTP/2 the
				// requests in flight together are one message, and only
				// the first reply to them could be lost.
				rc.TLSClientConfig.NextProtos = []string{"http/1.1"}
			}
			s, err := openStore(ctxT(t), rc, append([]helm3.Option{helm3.WithLog(t.Logf)}, with(opts)...)...)
			if err != nil {
				return nil, err
			}
			t.Cleanup(func() { s.Close() })
			return s.Namespace(helm3.DefaultNamespace), nil
		},
		Wipe: func(t *testing.T, s helm3.Store) { wipe(t, kubeBackendOf(s)) },
		// A bearer token the API server does not know (401).
		Denied: func(t *testing.T, _ helm3.Store, opts ...helm3.Option) (helm3.Store, error) {
			rc := k.Config(kubeenv.Admin)
			rc.BearerToken = "helmstore-test-no-such-token"
			s, err := openStore(ctxT(t), rc, with(opts)...)
			if err != nil {
				return nil, err
			}
			return s.Namespace(helm3.DefaultNamespace), nil
		},
		// A user bound to the shipped Role in each namespace (confine).
		Confined: func(t *testing.T, _ helm3.Store, namespaces ...string) (helm3.Store, error) {
			for _, ns := range namespaces {
				confine(t, k, ns)
			}
			s, err := openStore(ctxT(t), k.Config(confinedUser), with(nil)...)
			if err != nil {
				return nil, err
			}
			return s.Namespace(helm3.DefaultNamespace), nil
		},
		Tamper: func(t *testing.T, s helm3.Store) drivertest.Tamperer {
			return newTamperer(kubeBackendOf(s))
		},
	}
}

// proxiedConfig returns rc with every connection to the API server dialled
// at proxy(addr) instead of addr. TLS goes through the proxy untouched: the
// client still verifies the server's certificate for the host in rc.Host.
func proxiedConfig(rc *rest.Config, proxy drivertest.ProxyFunc) *rest.Config {
	rc = rest.CopyConfig(rc)
	var d net.Dialer
	rc.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return d.DialContext(ctx, network, proxy(addr))
	}
	return rc
}

// wipe deletes every helmstore object in the cluster.
func wipe(t testing.TB, b *kubeBackend) {
	t.Helper()
	nss := map[string]bool{}
	for _, res := range allResources {
		for _, raw := range rawObjects(t, b, res, "") {
			nss[meta(t, raw).Namespace] = true
		}
	}
	for ns := range nss {
		wipeNamespace(t, b, ns)
	}
	for _, res := range allResources {
		if n := len(rawObjects(t, b, res, "")); n != 0 {
			t.Fatalf("wipe: %d %s remain", n, res)
		}
	}
}

// wipeNamespace deletes every object of this package's kinds in ns.
func wipeNamespace(t testing.TB, b *kubeBackend, ns string) {
	t.Helper()
	for _, res := range allResources {
		if err := b.c.rc.Delete().Namespace(ns).Resource(res).Body(&metav1.DeleteOptions{}).Do(ctxT(t)).Error(); err != nil {
			t.Fatalf("wipe %s in %s: %v", res, ns, err)
		}
	}
}

// confinedUser is the user of Harness.Confined's stores: no other test
// binds it anywhere.
const confinedUser = "dave"

// confine binds the shipped Role in ns to confinedUser, unless a test
// before did.
func confine(t *testing.T, k *kubeenv.Server, ns string) {
	t.Helper()
	_, err := kubeClient(t, k, kubeenv.Admin).RbacV1().RoleBindings(ns).Get(ctxT(t), RBACName+"-"+confinedUser, metav1.GetOptions{})
	switch {
	case err == nil:
	case apierrors.IsNotFound(err):
		bindRole(t, k, ns, confinedUser, nil)
	default:
		t.Fatal(err)
	}
}
