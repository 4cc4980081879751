package migrate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	rspb "helm.sh/helm/v4/pkg/release/v1"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/client-go/kubernetes"

	"github.com/helmstore/helmstore/internal/testing/benchmarks"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
	"github.com/helmstore/helmstore/migrate"
)

// BenchmarkMigrate moves releases of the realistic large fixture (the
// 2.2 MB kube-prometheus-stack-like release, every revision a values-only
// upgrade) from Helm's Secrets driver to postgres, and from postgres to
// crsplit, every revision verified, and reports revisions moved per
// second. 3 releases x 4 revisions; 200 x 10 with HELMSTORE_BENCH_LARGE=1.
func BenchmarkMigrate(b *testing.B) {
	releases, revisions := 3, 4
	if os.Getenv(benchmarks.LargeEnv) == "1" {
		releases, revisions = 200, 10
	}
	ns := fmt.Sprintf("bench-mig-%dx%d", releases, revisions)
	k := cluster(b, ns)
	secrets := open(b, k, "secret", "")
	seedStack(b, k, secrets, ns, releases, revisions)
	postgres := open(b, k, "postgres", sqlenv.Postgres(b))
	if _, err := migrate.Run(ctx(b), secrets, postgres, migrate.Options{Namespace: ns}); err != nil {
		b.Fatal(err)
	}
	total := releases * revisions
	move := func(b *testing.B, from migrate.Store, to func(b *testing.B) migrate.Store, clean func(migrate.Store)) {
		var moving time.Duration
		for range b.N {
			b.StopTimer()
			dst := to(b)
			b.StartTimer()
			start := time.Now()
			rep, err := migrate.Run(ctx(b), from, dst, migrate.Options{Namespace: ns})
			moving += time.Since(start)
			if err != nil || rep.Copied != total {
				b.Fatalf("%+v, %v", rep, err)
			}
			b.StopTimer()
			clean(dst)
			b.StartTimer()
		}
		b.ReportMetric(float64(total*b.N)/moving.Seconds(), "rev/s")
	}
	b.Run(fmt.Sprintf("secrets-to-postgres/%dx%d", releases, revisions), func(b *testing.B) {
		move(b, secrets, func(b *testing.B) migrate.Store { return open(b, k, "postgres", sqlenv.Postgres(b)) }, func(migrate.Store) {})
	})
	b.Run(fmt.Sprintf("postgres-to-crsplit/%dx%d", releases, revisions), func(b *testing.B) {
		crsplit := open(b, k, "crsplit", "")
		move(b, postgres, func(*testing.B) migrate.Store { return crsplit }, func(s migrate.Store) {
			revs, err := s.Revisions(ctx(b), ns, "")
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range revs {
				if err := s.Delete(ctx(b), r); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// seedStack writes releases x revisions of the large fixture to Helm's
// Secrets in ns, unless a run before did.
func seedStack(b *testing.B, k *kubeenv.Server, secrets migrate.Store, ns string, releases, revisions int) {
	have, err := secrets.Revisions(ctx(b), ns, "")
	if err != nil {
		b.Fatal(err)
	}
	if len(have) == releases*revisions {
		return
	}
	cs, err := kubernetes.NewForConfig(k.Config(kubeenv.Admin))
	if err != nil {
		b.Fatal(err)
	}
	d := helmdriver.NewSecrets(cs.CoreV1().Secrets(ns))
	stack := fixture.NewStack(1)
	for i := range releases {
		name := fmt.Sprintf("stack-%03d", i)
		prev := stack.Release(name, ns, 1)
		for v := 1; v <= revisions; v++ {
			if v > 1 {
				prev = stack.Upgrade(prev)
			}
			raw, err := json.Marshal(prev)
			if err != nil {
				b.Fatal(err)
			}
			var rls rspb.Release
			if err := json.Unmarshal(raw, &rls); err != nil {
				b.Fatal(err)
			}
			if err := d.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, v), &rls); err != nil {
				b.Fatal(err)
			}
		}
	}
}
