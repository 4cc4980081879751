package sqlbackend_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// Releases and revisions of each BenchmarkSummaries30k store, in
// listNamespaces namespaces.
const (
	listReleases   = 10_000
	listRevisions  = 3
	listNamespaces = 100
)

// BenchmarkSummaries30k times a cold summary listing of the latest revision
// of every release across namespaces (a new store's
// Namespace("").Summaries, as a dashboard's first page without a limit)
// over 10,000 releases of 3 revisions each. The heads are seeded with bulk
// INSERTs, copies of one release's row (its body and digests) with the
// summary set. On PostgreSQL it logs the plan of the statement List runs.
func BenchmarkSummaries30k(b *testing.B) {
	for _, c := range dialects {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			conn := c.conn(b)
			s, err := helm3.Open(ctx, c.name, conn)
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			be := engine.Of(s).Backend().(*sqlbackend.Backend)
			seedHeads(b, s, be)
			if c.name == "postgres" {
				stmt, args := be.ListStatement(driver.ListQuery{Latest: true})
				rows, err := be.DB().QueryContext(ctx, be.Dialect().Rebind("EXPLAIN (ANALYZE, BUFFERS) "+stmt), args...)
				if err != nil {
					b.Fatal(err)
				}
				var plan []string
				for rows.Next() {
					var line string
					if err := rows.Scan(&line); err != nil {
						b.Fatal(err)
					}
					plan = append(plan, line)
				}
				rows.Close()
				b.Logf("plan of List(Latest):\n%s", strings.Join(plan, "\n"))
			}
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				cold, err := helm3.Open(ctx, c.name, conn)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				p, err := cold.Namespace("").Summaries(ctx, helm3.SummaryQuery{})
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				if len(p.Summaries) != listReleases || p.Summaries[0].Revision != listRevisions {
					b.Fatalf("listed %d releases (first %+v), want %d at revision %d", len(p.Summaries), p.Summaries[0], listReleases, listRevisions)
				}
				cold.Close()
				b.StartTimer()
			}
		})
	}
}

// seedHeads stores listReleases releases of listRevisions revisions: one
// through s, and copies of its row for the others.
func seedHeads(b testing.TB, s helm3.Store, be *sqlbackend.Backend) {
	ctx := context.Background()
	tmpl := sqltest.Release("tmpl", "seed", 1)
	if err := s.Namespace("seed").Create(sqltest.Key("tmpl", 1), tmpl); err != nil {
		b.Fatal(err)
	}
	var body []byte
	var chart, values, manifest string
	q := be.Dialect().Rebind("SELECT b.body, r.chart_digest, r.values_digest, r.manifest_digest FROM helmstore_releases r JOIN helmstore_bodies b ON b.namespace = r.namespace AND b.release_key = r.release_key WHERE r.namespace = 'seed'")
	if err := be.DB().QueryRowContext(ctx, q).Scan(&body, &chart, &values, &manifest); err != nil {
		b.Fatal(err)
	}
	for _, table := range []string{"helmstore_releases", "helmstore_bodies"} {
		if _, err := be.Exec(ctx, "DELETE FROM "+table+" WHERE namespace = 'seed'"); err != nil {
			b.Fatal(err)
		}
	}
	const cols = "namespace, release_key, name, version, status, owner, created_at, modified_at, labels, chart_digest, values_digest, manifest_digest, has_summary, chart_name, chart_version, app_version, updated, description"
	n := strings.Count(cols, ",") + 1
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", n), ",") + ")"
	tx, err := be.BeginTx(ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	const batch = 500
	var rows, bodyRows []string
	var args, bodyArgs []any
	flush := func() {
		if len(rows) == 0 {
			return
		}
		if _, err := be.ExecTx(ctx, tx, "INSERT INTO helmstore_releases ("+cols+") VALUES "+strings.Join(rows, ","), args...); err != nil {
			b.Fatal(err)
		}
		if _, err := be.ExecTx(ctx, tx, "INSERT INTO helmstore_bodies (namespace, release_key, body) VALUES "+strings.Join(bodyRows, ","), bodyArgs...); err != nil {
			b.Fatal(err)
		}
		rows, args, bodyRows, bodyArgs = rows[:0], args[:0], bodyRows[:0], bodyArgs[:0]
	}
	updated := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	for i := range listReleases {
		ns, name := fmt.Sprintf("ns-%03d", i%listNamespaces), fmt.Sprintf("release-%05d", i)
		for v := 1; v <= listRevisions; v++ {
			status := "superseded"
			if v == listRevisions {
				status = "deployed"
			}
			t := updated.Add(time.Duration(i*listRevisions+v) * time.Second)
			rows = append(rows, row)
			args = append(args, ns, driver.MakeKey(name, v), name, v, status, "helm", t.Unix(), t.Unix(), "{}", chart, values, manifest,
				true, "web-app", "1.2.3", "4.5.6", t.Format(time.RFC3339Nano), "Upgrade complete")
			bodyRows = append(bodyRows, "(?,?,?)")
			bodyArgs = append(bodyArgs, ns, driver.MakeKey(name, v), body)
			if len(rows) == batch {
				flush()
			}
		}
	}
	flush()
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	b.Logf("seeded %d heads of %d-byte bodies", listReleases*listRevisions, len(body))
}
