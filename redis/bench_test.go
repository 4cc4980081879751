package redis_test

import (
	"context"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	_ "github.com/helmstore/helmstore/encryption"
	"github.com/helmstore/helmstore/internal/testing/benchmarks"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
	"github.com/helmstore/helmstore/redis"
)

// The benchmarks run Helm's SQL driver on the local PostgreSQL and this
// backend on a standalone Redis and on a 3-primary Cluster, in the same run,
// on the same fixtures as sql's benchmarks (the kube-prometheus-stack-shaped
// release of fixture.Stack, ~2.2 MB of JSON), through benchmarks.Bench:
// each through Helm 3 (face=helm3) and Helm 4 (face=helm4, Helm 4's SQL
// driver for helm-sql).

var bench = benchmarks.Bench{Targets: benchTargets, CPU: true}

// redisTarget is this backend on the server base names, under a fresh key
// prefix for every run; with keys (key-encryption key URLs), encrypted at
// rest and named name+"+encrypted".
func redisTarget(name string, base func(testing.TB) string, keys ...string) benchmarks.Target {
	if len(keys) > 0 {
		name += "+encrypted"
	}
	return benchmarks.StoreTarget(name, func(b *testing.B, cfg *driver.Config) driver.Backend {
		cfg.Name, cfg.ConnectionString, cfg.EncryptionKeys = redis.Name, withPrefix(b, base(b)), keys
		be, err := redis.Open(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		return be
	})
}

func benchTargets(*testing.B) []benchmarks.Target {
	return []benchmarks.Target{
		benchmarks.HelmSQLTarget(sqlenv.PostgresUnmanaged),
		redisTarget("redis", redisenv.URL),
		redisTarget("redis-cluster", redisenv.SharedCluster),
	}
}

// Each benchmark runs its benchmarks.Bench method (see there what it
// times) on Helm's SQL driver, then on redis and redis-cluster, cold and
// warm for the reads, each through both faces.

// BenchmarkCreate: one values-only revision of the 2.2 MB release per op.
func BenchmarkCreate(b *testing.B) { bench.Create(b) }

// BenchmarkUpgrade: the three writes of a values-only `helm upgrade`.
func BenchmarkUpgrade(b *testing.B) { bench.Upgrade(b) }

// BenchmarkGet: the latest of 20 revisions, from one slot's hash tag.
func BenchmarkGet(b *testing.B) { bench.Get(b) }

// BenchmarkHistory: 20 revisions, from the release's index.
func BenchmarkHistory(b *testing.B) { bench.History(b) }

// BenchmarkDeployed: the deployed revision among 20, by the status index.
func BenchmarkDeployed(b *testing.B) { bench.Deployed(b) }

// BenchmarkList: `helm list -A` of 200 releases in 20 namespaces (in
// Cluster, from every primary).
func BenchmarkList(b *testing.B) { bench.List(b) }

// BenchmarkActionList: `helm list -A` through Helm's action.List, cold, of
// 1,000 × 3 typical and 200 × 3 large releases (Bench.ActionList).
func BenchmarkActionList(b *testing.B) { bench.ActionList(b) }

// BenchmarkSummaries: the summary listing of 1,000 (10,000 with
// HELMSTORE_BENCH_LARGE=1) releases × 3, cold, from the index sets
// (Bench.Summaries).
func BenchmarkSummaries(b *testing.B) { bench.Summaries(b) }

// encryption compares encryption at rest on and off: Helm's SQL driver,
// and the standalone server without and with encryption (a local key), in
// the same run.
var encryption = benchmarks.Bench{CPU: true, Targets: func(b *testing.B) []benchmarks.Target {
	return []benchmarks.Target{
		benchmarks.HelmSQLTarget(sqlenv.PostgresUnmanaged),
		redisTarget("redis", redisenv.URL),
		redisTarget("redis", redisenv.URL, drivertest.KeyURL(b)),
	}
}}

// BenchmarkEncryptedCreate is BenchmarkCreate, encryption on and off.
func BenchmarkEncryptedCreate(b *testing.B) { encryption.Create(b) }

// BenchmarkEncryptedGet is BenchmarkGet, encryption on and off.
func BenchmarkEncryptedGet(b *testing.B) { encryption.Get(b) }

// BenchmarkEncryptedHistory is BenchmarkHistory, encryption on and off.
func BenchmarkEncryptedHistory(b *testing.B) { encryption.History(b) }
