package benchmarks

import (
	"database/sql"
	"os"
	"sync"
	"testing"

	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
)

// Helm's SQL driver has no Close, so its connection pools cannot be
// released: one schema and one driver per namespace serve every benchmark
// of the process, their tables emptied for each run.
var helmSQL struct {
	sync.Mutex
	conn  string
	drop  func()
	db    *sql.DB
	views map[string]*helmdriver.SQL
}

// HelmSQLTarget is Helm's own SQL driver (PostgreSQL) as the benchmark
// target "helm-sql", beside which every backend's benchmarks run. connect
// returns the connection string of a schema for the benchmarks' own use
// and a function that drops it; it is called once per process, and
// Main (the TestMain of the benchmarks' package) drops the schema. B/rev is the
// size of what the driver stores: its release bodies and custom labels.
func HelmSQLTarget(connect func(testing.TB) (conn string, drop func())) Target {
	return Target{Name: "helm-sql", Open: func(b *testing.B, _ bool) Store {
		helmSQL.Lock()
		if helmSQL.conn == "" {
			conn, drop := connect(b)
			db, err := sql.Open("postgres", conn) // lib/pq, as Helm's driver
			if err != nil {
				helmSQL.Unlock()
				drop()
				b.Fatal(err)
			}
			helmSQL.conn, helmSQL.drop, helmSQL.db, helmSQL.views = conn, drop, db, map[string]*helmdriver.SQL{}
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
		return Store{View: view, Stored: stored}
	}}
}

// Main is the TestMain of a package whose benchmarks run HelmSQLTarget: it
// runs m's tests and benchmarks, then each of stop (what stops the
// package's test services), drops the schema the Helm SQL driver's
// benchmarks used, if any, and exits with m's code.
func Main(m *testing.M, stop ...func()) {
	code := m.Run()
	for _, f := range stop {
		f()
	}
	dropHelmSQL()
	os.Exit(code)
}

// dropHelmSQL drops the schema HelmSQLTarget's benchmarks used, if any.
func dropHelmSQL() {
	helmSQL.Lock()
	defer helmSQL.Unlock()
	if helmSQL.drop != nil {
		helmSQL.db.Close()
		helmSQL.drop()
		helmSQL.conn, helmSQL.drop, helmSQL.db, helmSQL.views = "", nil, nil, nil
	}
}
