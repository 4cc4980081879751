package sqlbackend_test

import (
	"context"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// TestListLatestPlans checks how the servers plan a listing of latest
// revisions in a table of 30,000 heads just filled in bulk, whose
// statistics lag: MariaDB must find each release's latest revision through
// the (namespace, name, version) index (it took the primary key and read
// every row of the namespace per release: 400 ms instead of 80 for 10,000
// releases), and PostgreSQL must serve a page from that index without
// reading and sorting the whole table (it did, for the correlated MAX: a
// page of 50 took as long as all 10,000). Both are fixed by the dialects'
// LatestRevision; MariaDB's whole listing groups the index once instead
// (LatestFrom), reading it in order, and joins the groups to their rows
// (LatestJoin).
func TestListLatestPlans(t *testing.T) {
	sqlBackends(t, func(t *testing.T, s helm3.Store, be *sqlbackend.Backend) {
		name := be.Dialect().Name
		if name != "mysql" && name != "postgres" {
			return
		}
		seedHeads(t, s, be)
		stmt, args := be.ListStatement(driver.ListQuery{Latest: true, Limit: 50})
		plan := explain(t, be, stmt, args)
		switch name {
		case "mysql":
			found := false
			for _, row := range plan {
				if row["select_type"] == "DEPENDENT SUBQUERY" {
					found = true
					if row["key"] != "helmstore_releases_list" {
						t.Errorf("the latest revision's subquery reads key %q (%v), want helmstore_releases_list", row["key"], row)
					}
				}
			}
			if !found {
				t.Fatalf("no dependent subquery in the plan of %s: %v", stmt, plan)
			}
			// A whole listing groups the index once (LatestFrom), in
			// order rather than by a loose index scan, with no probe
			// per row; then joins each group's row (LatestJoin),
			// groups first.
			stmt, args = be.ListStatement(driver.ListQuery{Latest: true})
			found = false
			var primary []string
			for _, row := range explain(t, be, stmt, args) {
				switch row["select_type"] {
				case "DERIVED":
					found = true
					if row["key"] != "helmstore_releases_list" || !strings.Contains(row["Extra"], "Using index") {
						t.Errorf("the whole listing groups with key %q (%v), want helmstore_releases_list alone", row["key"], row)
					}
					if strings.Contains(row["Extra"], "for group-by") {
						t.Errorf("the whole listing groups by a loose index scan, a descent of the index per release: %v", row)
					}
				case "DEPENDENT SUBQUERY":
					t.Errorf("the whole listing probes per row: %v", row)
				case "PRIMARY":
					primary = append(primary, row["table"])
					if row["table"] == "r" && row["key"] != "helmstore_releases_list" {
						t.Errorf("the whole listing joins its rows by key %q (%v), want helmstore_releases_list", row["key"], row)
					}
				}
			}
			if len(primary) != 2 || primary[1] != "r" {
				t.Errorf("the whole listing joins %v, want the groups first, then r", primary)
			}
			if !found {
				t.Errorf("no grouped table in the plan of the whole listing %s", stmt)
			}
		case "postgres":
			var text []string
			for _, row := range plan {
				text = append(text, row["QUERY PLAN"])
			}
			if p := strings.Join(text, "\n"); strings.Contains(p, "Seq Scan on helmstore_releases r") || strings.Contains(p, "Sort") {
				t.Errorf("a page of latest revisions reads the whole table:\n%s", p)
			}
		}
	})
}

// explain returns the rows of the server's EXPLAIN of stmt, by column.
func explain(t *testing.T, be *sqlbackend.Backend, stmt string, args []any) []map[string]string {
	t.Helper()
	rows, err := be.DB().QueryContext(context.Background(), be.Dialect().Rebind("EXPLAIN "+stmt), args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := map[string]string{}
		for i, col := range cols {
			switch v := vals[i].(type) {
			case []byte:
				row[col] = string(v)
			case string:
				row[col] = v
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
