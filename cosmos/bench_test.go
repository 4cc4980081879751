package cosmos

import (
	"context"
	"testing"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	_ "github.com/helmstore/helmstore/encryption"
	"github.com/helmstore/helmstore/internal/testing/benchmarks"
	"github.com/helmstore/helmstore/internal/testing/castest"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// The benchmarks run benchmarks.Bench (see there what each times) on Helm's
// SQL driver on the local PostgreSQL and on this backend on the Cosmos DB
// test server, in the same run, on the 2.2 MB release of fixture.Stack,
// each through Helm 3 (face=helm3) and Helm 4 (face=helm4, Helm 4's SQL
// driver for helm-sql).
// The test server is a Node process on loopback, so its times say little
// about Azure; what carries over are the counts this backend's counter
// takes of every request it sends, reported per operation:
//
//   - roundtrips/op: HTTP requests, the background commit of a write
//     included (each write waits for it, outside the timer);
//   - RU/op: the request charge the server reported (x-ms-request-charge),
//     where it reports one.
//
// B/rev is the growth of the store's Stats (heads and parts) per revision,
// as for every helmstore backend.
var bench = benchmarks.Bench{Targets: benchTargets, CPU: true}

// benchTargets are Helm's SQL driver and this backend.
func benchTargets(*testing.B) []benchmarks.Target {
	return []benchmarks.Target{benchmarks.HelmSQLTarget(sqlenv.PostgresUnmanaged), cosmosTarget()}
}

// BenchmarkCreate: one values-only revision of the 2.2 MB release per op
// (its parts first, its head last), with B/rev and requests.
func BenchmarkCreate(b *testing.B) { bench.Create(b) }

// BenchmarkUpgrade: the three writes of a values-only `helm upgrade`.
func BenchmarkUpgrade(b *testing.B) { bench.Upgrade(b) }

// cosmosTarget is this backend on a new container of the test server for
// every run, counting its requests; with keys (key-encryption key URLs),
// encrypted at rest and named "cosmos+encrypted".
func cosmosTarget(keys ...string) benchmarks.Target {
	name := "cosmos"
	if len(keys) > 0 {
		name += "+encrypted"
	}
	return benchmarks.Target{Name: name, ColdWarm: true, SlowSeed: true, Open: func(b *testing.B, f benchmarks.Face, cache bool) benchmarks.Store {
		c := new(counter)
		var be *cas.Backend
		s := benchmarks.OpenStore(b, f, cache, func(b *testing.B, cfg *driver.Config) driver.Backend {
			cfg.Name, cfg.ConnectionString, cfg.EncryptionKeys = Name, connString(b), keys
			var err error
			if be, err = open(context.Background(), cfg, options{counter: c, observe: itemSizes.observe}); err != nil {
				b.Fatal(err)
			}
			return be
		})
		stored := s.Stored
		s.Stored = func() int64 {
			castest.WaitCommits(be)
			return stored()
		}
		s.AfterWrite = func(*testing.B, string, int) { castest.WaitCommits(be) }
		s.Settle = func() { castest.WaitCommits(be) }
		s.Counters = func() map[string]float64 {
			m := map[string]float64{"roundtrips/op": float64(c.RoundTrips())}
			if ru := c.RequestCharge(); ru > 0 {
				m["RU/op"] = ru
			}
			return m
		}
		return s
	}}
}

// BenchmarkGet: the latest of 20 revisions (a point read, parts from the
// cache when warm).
func BenchmarkGet(b *testing.B) { bench.Get(b) }

// BenchmarkHistory: the 20 revisions, by a query in the release's
// partition.
func BenchmarkHistory(b *testing.B) { bench.History(b) }

// BenchmarkDeployed: the deployed revision among 20.
func BenchmarkDeployed(b *testing.B) { bench.Deployed(b) }

// BenchmarkList: `helm list -A` of 200 releases in 20 namespaces, a
// cross-partition query.
func BenchmarkList(b *testing.B) { bench.List(b) }

// listBench runs the listing benchmarks on Helm's SQL driver and this
// backend, only with HELMSTORE_BENCH_LARGE=1: the test server takes 1.5
// minutes to store 1,000 releases × 3.
var listBench = benchmarks.Bench{Targets: func(*testing.B) []benchmarks.Target {
	helmSQL := benchmarks.HelmSQLTarget(sqlenv.PostgresUnmanaged)
	helmSQL.SlowSeed = true
	return []benchmarks.Target{helmSQL, cosmosTarget()}
}}

// BenchmarkActionList: `helm list -A` through Helm's action.List, cold, of
// 1,000 × 3 typical and 200 × 3 large releases, cross-partition
// (Bench.ActionList).
func BenchmarkActionList(b *testing.B) { listBench.ActionList(b) }

// BenchmarkSummaries: the summary listing of 1,000 (and 10,000) releases
// × 3, cold, one query per page (Bench.Summaries).
func BenchmarkSummaries(b *testing.B) { listBench.Summaries(b) }

// encryption compares encryption at rest on and off: Helm's SQL driver,
// and this backend without and with encryption (a local key), in the same
// run.
var encryption = benchmarks.Bench{CPU: true, Targets: func(b *testing.B) []benchmarks.Target {
	return []benchmarks.Target{benchmarks.HelmSQLTarget(sqlenv.PostgresUnmanaged), cosmosTarget(), cosmosTarget(drivertest.KeyURL(b))}
}}

// BenchmarkEncryptedCreate is BenchmarkCreate, encryption on and off.
func BenchmarkEncryptedCreate(b *testing.B) { encryption.Create(b) }

// BenchmarkEncryptedGet is BenchmarkGet, encryption on and off.
func BenchmarkEncryptedGet(b *testing.B) { encryption.Get(b) }

// BenchmarkEncryptedHistory is BenchmarkHistory, encryption on and off.
func BenchmarkEncryptedHistory(b *testing.B) { encryption.History(b) }
