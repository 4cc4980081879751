package benchmarks

import (
	"database/sql"
	"os"
	"sync"
	"testing"

	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	helm4driver "helm.sh/helm/v4/pkg/storage/driver"
)

// Helm's SQL drivers have no Close, so their connection pools cannot be
// released: per Helm, one schema and one driver per namespace serve every
// benchmark of the process, their tables emptied for each run. Each Helm
// has a schema of its own (the two drivers make the same tables).
var helmSQL = map[Face]*helmSQLSchema{Helm3: {}, Helm4: {}}

// helmSQLSchema is one Helm's SQL driver's schema and drivers.
type helmSQLSchema struct {
	sync.Mutex
	conn  string
	drop  func()
	db    *sql.DB
	views map[string]any // *helmdriver.SQL or *helm4driver.SQL
}

// HelmSQLTarget is Helm's own SQL driver (PostgreSQL) as the benchmark
// target "helm-sql", beside which every backend's benchmarks run: Helm 3's
// (helm.sh/helm/v3/pkg/storage/driver.NewSQL) for face=helm3, Helm 4's
// (helm.sh/helm/v4/pkg/storage/driver.NewSQL) for face=helm4, on the same
// server. connect returns the connection string of a schema for the
// benchmarks' own use and a function that drops it; it is called once per
// process and Helm, and Main (the TestMain of the benchmarks' package)
// drops the schemas. B/rev is the size of what the driver stores: its
// release bodies and custom labels.
func HelmSQLTarget(connect func(testing.TB) (conn string, drop func())) Target {
	return Target{Name: "helm-sql", Helm: true, Open: func(b *testing.B, f Face, _ bool) Store {
		h := helmSQL[f]
		h.Lock()
		if h.conn == "" {
			conn, drop := connect(b)
			db, err := sql.Open("postgres", conn) // lib/pq, as Helm's drivers
			if err != nil {
				h.Unlock()
				drop()
				b.Fatal(err)
			}
			h.conn, h.drop, h.db, h.views = conn, drop, db, map[string]any{}
		}
		h.Unlock()
		view := func(ns string) any {
			h.Lock()
			defer h.Unlock()
			if d, ok := h.views[ns]; ok {
				return d
			}
			var d any
			var err error
			if f == Helm4 {
				d, err = helm4driver.NewSQL(h.conn, ns)
			} else {
				d, err = helmdriver.NewSQL(h.conn, func(string, ...interface{}) {}, ns)
			}
			if err != nil {
				b.Fatal(err)
			}
			h.views[ns] = d
			return d
		}
		view("default") // creates the tables
		if _, err := h.db.Exec("TRUNCATE releases_v1, custom_labels_v1"); err != nil {
			b.Fatal(err)
		}
		stored := func() int64 {
			var n int64
			if err := h.db.QueryRow(`SELECT COALESCE(SUM(octet_length(body)), 0) + (SELECT COALESCE(SUM(octet_length(key) + octet_length(value)), 0) FROM custom_labels_v1) FROM releases_v1`).Scan(&n); err != nil {
				b.Fatal(err)
			}
			return n
		}
		s := Store{Stored: stored}
		if f == Helm4 {
			s.View4 = func(ns string) helm4driver.Driver { return view(ns).(*helm4driver.SQL) }
		} else {
			s.View = func(ns string) helmdriver.Driver { return view(ns).(*helmdriver.SQL) }
		}
		return s
	}}
}

// Main is the TestMain of a package whose benchmarks run HelmSQLTarget: it
// runs m's tests and benchmarks, then each of stop (what stops the
// package's test services), drops the schemas the Helm SQL drivers'
// benchmarks used, if any, and exits with m's code.
func Main(m *testing.M, stop ...func()) {
	code := m.Run()
	for _, f := range stop {
		f()
	}
	dropHelmSQL()
	os.Exit(code)
}

// dropHelmSQL drops the schemas HelmSQLTarget's benchmarks used, if any.
func dropHelmSQL() {
	for _, h := range helmSQL {
		h.Lock()
		if h.drop != nil {
			h.db.Close()
			h.drop()
			h.conn, h.drop, h.db, h.views = "", nil, nil, nil
		}
		h.Unlock()
	}
}
