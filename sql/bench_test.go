package sql_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	_ "github.com/helmstore/helmstore/encryption"
	"github.com/helmstore/helmstore/internal/registry"
	"github.com/helmstore/helmstore/internal/testing/benchmarks"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// The benchmarks are benchmarks.Bench's, on Helm's own SQL driver and on
// each of our dialects (postgres and mysql on the local servers, sqlite in
// a file), in the same run, on the 2.2 MB release of fixture.Stack; each
// through Helm 3 (face=helm3: our helm3 face, Helm 3's SQL driver) and
// Helm 4 (face=helm4: our helm4 face, Helm 4's SQL driver).
var bench = benchmarks.Bench{Targets: benchTargets, CPU: true}

// BenchmarkCreate stores one values-only upgrade of the 2.2 MB release per
// op and reports the bytes each revision adds to the store.
func BenchmarkCreate(b *testing.B) { bench.Create(b) }

// BenchmarkUpgrade writes what a values-only `helm upgrade` writes to
// storage and reports the bytes each upgrade adds to the store.
func BenchmarkUpgrade(b *testing.B) { bench.Upgrade(b) }

// TestMain drops what the benchmarks' Helm SQL driver left.
func TestMain(m *testing.M) { benchmarks.Main(m) }

// ourTarget is our store registered as name, on a fresh database conn
// names for every run; with keys (key-encryption key URLs), encrypted at
// rest and named name+"+encrypted".
func ourTarget(name string, conn func(b *testing.B) string, keys ...string) benchmarks.Target {
	target := name
	if len(keys) > 0 {
		target += "+encrypted"
	}
	return benchmarks.StoreTarget(target, func(b *testing.B, cfg *driver.Config) driver.Backend {
		cfg.Name, cfg.ConnectionString, cfg.EncryptionKeys = name, conn(b), keys
		be, err := registry.Open(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		return be
	})
}

func postgresConn(b *testing.B) string { return sqlenv.Postgres(b) }
func sqliteConn(b *testing.B) string   { return filepath.Join(b.TempDir(), "helm.db") }

// benchTargets are Helm's SQL driver (Helm 3's and Helm 4's) and our three
// dialects, each through both faces.
func benchTargets(b *testing.B) []benchmarks.Target {
	return []benchmarks.Target{
		benchmarks.HelmSQLTarget(sqlenv.PostgresUnmanaged),
		ourTarget("postgres", postgresConn),
		ourTarget("mysql", func(b *testing.B) string { return sqlenv.MySQL(b) }),
		ourTarget("sqlite", sqliteConn),
	}
}

// encryption compares encryption at rest on and off: Helm's SQL driver,
// and postgres, mysql and sqlite without and with encryption (a local
// key), in the same run.
var encryption = benchmarks.Bench{CPU: true, Targets: func(b *testing.B) []benchmarks.Target {
	mysqlConn := func(b *testing.B) string { return sqlenv.MySQL(b) }
	return []benchmarks.Target{
		benchmarks.HelmSQLTarget(sqlenv.PostgresUnmanaged),
		ourTarget("postgres", postgresConn),
		ourTarget("postgres", postgresConn, drivertest.KeyURL(b)),
		ourTarget("mysql", mysqlConn),
		ourTarget("mysql", mysqlConn, drivertest.KeyURL(b)),
		ourTarget("sqlite", sqliteConn),
		ourTarget("sqlite", sqliteConn, drivertest.KeyURL(b)),
	}
}}

// BenchmarkEncryptedCreate is BenchmarkCreate, encryption on and off.
func BenchmarkEncryptedCreate(b *testing.B) { encryption.Create(b) }

// BenchmarkEncryptedGet is BenchmarkGet, encryption on and off.
func BenchmarkEncryptedGet(b *testing.B) { encryption.Get(b) }

// BenchmarkEncryptedHistory is BenchmarkHistory, encryption on and off.
func BenchmarkEncryptedHistory(b *testing.B) { encryption.History(b) }

// BenchmarkGet reads the latest of 20 revisions.
func BenchmarkGet(b *testing.B) { bench.Get(b) }

// BenchmarkHistory reads all 20 revisions, as `helm history` does.
func BenchmarkHistory(b *testing.B) { bench.History(b) }

// BenchmarkDeployed finds the deployed revision among 20, as every
// `helm upgrade` does first.
func BenchmarkDeployed(b *testing.B) { bench.Deployed(b) }

// BenchmarkList lists 200 releases in 20 namespaces across all namespaces,
// as `helm list -A` does.
func BenchmarkList(b *testing.B) { bench.List(b) }

// BenchmarkActionList runs Helm's action.List as `helm list -A` does, cold,
// over 1,000 releases × 3 revisions of a typical chart and 200 × 3 of the
// 2.2 MB release, and reports its peak heap against the manifests it
// returns (Bench.ActionList).
func BenchmarkActionList(b *testing.B) { bench.ActionList(b) }

// BenchmarkSummaries lists the latest revisions of 1,000 (and, with
// HELMSTORE_BENCH_LARGE=1, 10,000) releases × 3 cold through
// Store.Summaries, beside Helm's SQL driver's action.List at 1,000, and
// counts its part reads (Bench.Summaries).
func BenchmarkSummaries(b *testing.B) { bench.Summaries(b) }
