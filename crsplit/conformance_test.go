package crsplit

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/drivertest"
	"github.com/helmstore/helmstore/internal/testenv"
)

// TestConformance runs the core conformance suite against crsplit on the
// real API server. Each Open starts from an empty cluster: every helmstore
// object, in every namespace, is deleted first (the suite lists across all
// namespaces). Tests in this package do not run in parallel.
func TestConformance(t *testing.T) {
	k := cluster(t)
	for _, ns := range []string{"team-a", "team-b"} {
		ensureNamespace(t, k, ns)
	}
	drivertest.Run(t, drivertest.Harness{
		Open: func(t *testing.T) driver.Store {
			s, b := openAs(t, k, testenv.KubeAdmin, driver.DefaultNamespace)
			wipe(t, b)
			return s
		},
		Reopen: func(t *testing.T, _ driver.Store, opts ...driver.Option) driver.Store {
			s, _ := openAs(t, k, testenv.KubeAdmin, driver.DefaultNamespace, opts...)
			return s
		},
		Tamper: func(t *testing.T, s driver.Store) drivertest.Tamperer {
			return newTamperer(kubeBackendOf(s))
		},
	})
}

// wipe deletes every helmstore object in the cluster.
func wipe(t testing.TB, b *kubeBackend) {
	t.Helper()
	ctx := ctxT(t)
	for _, res := range allResources {
		raws := rawObjects(t, b, res, "")
		nss := map[string]bool{}
		for _, raw := range raws {
			nss[meta(t, raw).Namespace] = true
		}
		for ns := range nss {
			if err := b.c.rc.Delete().Namespace(ns).Resource(res).Body(&metav1.DeleteOptions{}).Do(ctx).Error(); err != nil {
				t.Fatalf("wipe %s in %s: %v", res, ns, err)
			}
		}
		if n := len(rawObjects(t, b, res, "")); n != 0 {
			t.Fatalf("wipe: %d %s remain", n, res)
		}
	}
}
