package redis_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/cputime"
	"github.com/helmstore/helmstore/internal/fixture"
	"github.com/helmstore/helmstore/internal/testenv"
)

// The benchmarks run Helm's SQL driver on the local PostgreSQL and this
// backend on a standalone Redis and on a 3-primary Cluster, in the same run,
// on the same fixtures as sql's benchmarks (the kube-prometheus-stack-shaped
// release of fixture.Stack, ~2.2 MB of JSON).

// A benchmark target is one store: ours, cold (no part cache) or warm, or
// Helm's own SQL driver.
type target struct {
	name  string
	setup func(b *testing.B, cache bool) (view func(ns string) helmdriver.Driver, stored func() int64)
	ours  bool
}

// Helm's SQL driver has no Close: one schema and one driver per namespace
// serve the whole run, its tables emptied for every setup.
var helmSQL struct {
	sync.Mutex
	conn  string
	drop  func()
	db    *sql.DB
	views map[string]*helmdriver.SQL
}

func helmSQLTarget() target {
	return target{name: "helm-sql", setup: func(b *testing.B, _ bool) (func(string) helmdriver.Driver, func() int64) {
		helmSQL.Lock()
		if helmSQL.conn == "" {
			helmSQL.conn, helmSQL.drop = testenv.PostgresUnmanaged(b)
			db, err := sql.Open("pgx", helmSQL.conn)
			if err != nil {
				b.Fatal(err)
			}
			helmSQL.db, helmSQL.views = db, map[string]*helmdriver.SQL{}
		}
		helmSQL.Unlock()
		view := func(ns string) helmdriver.Driver {
			helmSQL.Lock()
			defer helmSQL.Unlock()
			if d, ok := helmSQL.views[ns]; ok {
				return d
			}
			d, err := helmdriver.NewSQL(helmSQL.conn, func(string, ...interface{}) {}, ns)
			if err != nil {
				b.Fatal(err)
			}
			helmSQL.views[ns] = d
			return d
		}
		view("default") // creates the tables
		if _, err := helmSQL.db.Exec("TRUNCATE releases_v1, custom_labels_v1"); err != nil {
			b.Fatal(err)
		}
		stored := func() int64 {
			var n int64
			if err := helmSQL.db.QueryRow(`SELECT COALESCE(SUM(octet_length(body)), 0) + (SELECT COALESCE(SUM(octet_length(key) + octet_length(value)), 0) FROM custom_labels_v1) FROM releases_v1`).Scan(&n); err != nil {
				b.Fatal(err)
			}
			return n
		}
		return view, stored
	}}
}

// redisTarget is this backend on the server base names, under a fresh key
// prefix for every setup.
func redisTarget(name string, base func(testing.TB) string) target {
	return target{name: name, ours: true, setup: func(b *testing.B, cache bool) (func(string) helmdriver.Driver, func() int64) {
		opts := []driver.Option{}
		if !cache {
			opts = append(opts, driver.WithCacheBytes(0))
		}
		s := openStore(b, withPrefix(b, base(b)), opts...)
		b.Cleanup(func() { s.Close() })
		stored := func() int64 {
			st, err := s.Namespace("").Stats(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			return st.StoredBytes()
		}
		return func(ns string) helmdriver.Driver { return s.Namespace(ns) }, stored
	}}
}

func benchTargets() []target {
	return []target{
		helmSQLTarget(),
		redisTarget("redis", testenv.Redis),
		redisTarget("redis-cluster", testenv.SharedRedisCluster),
	}
}

var stack = sync.OnceValue(func() *fixture.Stack { return fixture.NewStack(1) })

// stackUpgrades returns n successive values-only revisions of one release
// of the stack, every revision but the last superseded.
func stackUpgrades(name, ns string, n int) []*release.Release {
	out := make([]*release.Release, n)
	for i := range out {
		out[i] = stack().Release(name, ns, i+1)
		if i < n-1 {
			out[i].Info.Status = release.StatusSuperseded
		}
	}
	return out
}

func relKey(name string, v int) string { return fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, v) }

// variants runs fn for each target, cold and warm for ours.
func variants(b *testing.B, fn func(b *testing.B, t target, cache bool)) {
	for _, t := range benchTargets() {
		if !t.ours {
			b.Run(t.name, func(b *testing.B) { fn(b, t, false) })
			continue
		}
		b.Run(t.name+"-cold", func(b *testing.B) { fn(b, t, false) })
		b.Run(t.name+"-warm", func(b *testing.B) { fn(b, t, true) })
	}
}

// BenchmarkCreate stores one values-only upgrade of the 2.2 MB release per
// op and reports the bytes each revision adds to the store.
func BenchmarkCreate(b *testing.B) {
	benchUpgrades(b, release.StatusSuperseded, func(d helmdriver.Driver, i int, r, prev *release.Release) error {
		return d.Create(relKey("app", i+1), r)
	})
}

// BenchmarkUpgrade writes what a values-only `helm upgrade` writes to
// storage: the new revision (pending-upgrade), the previous one superseded,
// the new one deployed; it reports the bytes each upgrade adds.
func BenchmarkUpgrade(b *testing.B) {
	benchUpgrades(b, release.StatusDeployed, func(d helmdriver.Driver, i int, r, prev *release.Release) error {
		r.Info.Status = release.StatusPendingUpgrade
		if err := d.Create(relKey("app", i+1), r); err != nil {
			return err
		}
		prev.Info.Status = release.StatusSuperseded
		if err := d.Update(relKey("app", i), prev); err != nil {
			return err
		}
		r.Info.Status = release.StatusDeployed
		return d.Update(relKey("app", i+1), r)
	})
}

func benchUpgrades(b *testing.B, first release.Status, write func(d helmdriver.Driver, i int, r, prev *release.Release) error) {
	for _, t := range benchTargets() {
		b.Run(t.name, func(b *testing.B) {
			view, stored := t.setup(b, true)
			d := view("default")
			rs := stackUpgrades("app", "default", b.N+1)
			rs[0].Info.Status = first
			if err := d.Create(relKey("app", 1), rs[0]); err != nil {
				b.Fatal(err)
			}
			before := stored()
			b.ResetTimer()
			cpu := cputime.Start(b, "cpu-ms/op")
			for i := 1; i <= b.N; i++ {
				if err := write(d, i, rs[i], rs[i-1]); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			cpu()
			b.ReportMetric(float64(stored()-before)/float64(b.N), "B/rev")
		})
	}
}

// store20 stores 20 revisions of the 2.2 MB release.
func store20(b *testing.B, d helmdriver.Driver) {
	for _, r := range stackUpgrades("app", "default", 20) {
		if err := d.Create(relKey(r.Name, r.Version), r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet reads the latest of 20 revisions.
func BenchmarkGet(b *testing.B) {
	variants(b, func(b *testing.B, t target, cache bool) {
		view, _ := t.setup(b, cache)
		d := view("default")
		store20(b, d)
		d.Get(relKey("app", 20))
		b.ResetTimer()
		cpu := cputime.Start(b, "cpu-ms/op")
		for i := 0; i < b.N; i++ {
			if _, err := d.Get(relKey("app", 20)); err != nil {
				b.Fatal(err)
			}
		}
		cpu()
	})
}

// BenchmarkHistory reads all 20 revisions, as `helm history` does.
func BenchmarkHistory(b *testing.B) {
	variants(b, func(b *testing.B, t target, cache bool) {
		view, _ := t.setup(b, cache)
		d := view("default")
		store20(b, d)
		st := storage.Init(d)
		st.History("app")
		b.ResetTimer()
		cpu := cputime.Start(b, "cpu-ms/op")
		for i := 0; i < b.N; i++ {
			rs, err := st.History("app")
			if err != nil || len(rs) != 20 {
				b.Fatalf("history: %d, %v", len(rs), err)
			}
		}
		cpu()
	})
}

// BenchmarkDeployed finds the deployed revision among 20, as every
// `helm upgrade` does first.
func BenchmarkDeployed(b *testing.B) {
	variants(b, func(b *testing.B, t target, cache bool) {
		view, _ := t.setup(b, cache)
		d := view("default")
		store20(b, d)
		st := storage.Init(d)
		st.Deployed("app")
		b.ResetTimer()
		cpu := cputime.Start(b, "cpu-ms/op")
		for i := 0; i < b.N; i++ {
			r, err := st.Deployed("app")
			if err != nil || r.Version != 20 {
				b.Fatalf("deployed: %v", err)
			}
		}
		cpu()
	})
}

// BenchmarkList lists 200 releases (a ~150 KB application chart) in 20
// namespaces across all namespaces, as `helm list -A` does.
func BenchmarkList(b *testing.B) {
	g := fixture.New(3)
	ch := g.Chart(fixture.ChartOptions{Name: "app", Version: "2.1.0", Templates: 40, TemplateSize: 2500, ValueKeys: 30})
	var rs []*release.Release
	for i := 0; i < 200; i++ {
		ns := fmt.Sprintf("ns-%02d", i%20)
		rs = append(rs, g.Release(fmt.Sprintf("app-%03d", i), ns, 1, ch, g.Values(10), release.StatusDeployed, 20000))
	}
	variants(b, func(b *testing.B, t target, cache bool) {
		view, _ := t.setup(b, cache)
		for _, r := range rs {
			if err := view(r.Namespace).Create(relKey(r.Name, 1), r); err != nil {
				b.Fatal(err)
			}
		}
		all := view("")
		all.List(func(*release.Release) bool { return true })
		b.ResetTimer()
		cpu := cputime.Start(b, "cpu-ms/op")
		for i := 0; i < b.N; i++ {
			got, err := all.List(func(*release.Release) bool { return true })
			if err != nil || len(got) != 200 {
				b.Fatalf("list: %d, %v", len(got), err)
			}
		}
		cpu()
	})
}
