package crsplit

import (
	"testing"

	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/testing/benchmarks"
	"github.com/helmstore/helmstore/internal/testing/castest"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// The listing benchmarks list every namespace of the shared API server, as
// `helm list -A` does: crsplit (crsplit-cold) and Helm's Secrets driver
// (helm-secrets) store their sets in the same namespaces (ns-000, ...,
// made here), each kind of its own objects, and each set's objects are
// deleted after it, so that every listing sees its set alone.
var listBench = benchmarks.Bench{Targets: listTargets}

// listTargets are crsplit and Helm's Secrets driver for the listing
// benchmarks.
func listTargets(b *testing.B) []benchmarks.Target {
	k := cluster(b)
	warmUp.Do(func() { warmUpServer(b, k) })
	for i := range benchmarks.ListNamespaces {
		ensureNamespace(b, k, benchmarks.ListNamespace(i))
	}
	return []benchmarks.Target{
		{Name: "crsplit", ColdWarm: true, SlowSeed: true, Open: func(b *testing.B, f benchmarks.Face, cache bool) benchmarks.Store {
			var be driver.Backend
			s := benchmarks.OpenStore(b, f, cache, func(b *testing.B, cfg *driver.Config) driver.Backend {
				cfg.Name, cfg.RESTClientGetter = Name, k.Config(kubeenv.Admin)
				var err error
				if be, err = Open(ctxT(b), cfg); err != nil {
					b.Fatal(err)
				}
				return be
			})
			s.Settle = func() { castest.WaitCommits(be.(*cas.Backend)) }
			b.Cleanup(func() {
				s.Settle()
				deleteListed(b, k, allResources...)
			})
			return s
		}},
		{Name: "helm-secrets", Helm: true, SlowSeed: true, Open: func(b *testing.B, f benchmarks.Face, _ bool) benchmarks.Store {
			cs, err := kubernetes.NewForConfig(k.Config(kubeenv.Admin)) // as Helm's client: client-go's defaults
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { deleteListed(b, k, "secrets") })
			return benchmarks.Store{View: func(ns string) helmdriver.Driver { return helmdriver.NewSecrets(cs.CoreV1().Secrets(ns)) }}
		}},
	}
}

// deleteListed deletes every object of the resources res (crsplit's, or
// core "secrets" with Helm's owner label) in the listing benchmarks'
// namespaces.
func deleteListed(b *testing.B, k *kubeenv.Server, res ...string) {
	cs, err := kubernetes.NewForConfig(k.Config(kubeenv.Admin))
	if err != nil {
		b.Fatal(err)
	}
	c, err := newClient(k.Config(kubeenv.Admin))
	if err != nil {
		b.Fatal(err)
	}
	for i := range benchmarks.ListNamespaces {
		ns := benchmarks.ListNamespace(i)
		for _, r := range res {
			if r == "secrets" {
				err = cs.CoreV1().Secrets(ns).DeleteCollection(ctxT(b), metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: "owner=helm"})
			} else {
				err = c.rc.Delete().Namespace(ns).Resource(r).Do(ctxT(b)).Error()
			}
			if err != nil {
				b.Fatalf("delete the %s of %s: %v", r, ns, err)
			}
		}
	}
}

// BenchmarkActionList: `helm list -A` through Helm's action.List, cold,
// over 1,000 × 3 typical releases and 200 × 3 of the 2.2 MB release
// (Bench.ActionList), crsplit beside Helm's Secrets driver.
func BenchmarkActionList(b *testing.B) { listBench.ActionList(b) }

// BenchmarkSummaries: the summary listing of 1,000 (10,000 with
// HELMSTORE_BENCH_LARGE=1) releases × 3, cold, from the Release objects
// alone, beside Helm's Secrets driver's action.List at 1,000
// (Bench.Summaries).
func BenchmarkSummaries(b *testing.B) { listBench.Summaries(b) }
