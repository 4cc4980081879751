package sqlbackend_test

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// preSummaryColumns are the columns of helmstore_releases before the
// migration that added the summary (less the body, in helmstore_bodies
// since): what a store of that schema wrote.
const preSummaryColumns = "namespace, release_key, name, version, status, owner, created_at, modified_at, labels, chart_digest, values_digest, manifest_digest, values_base, manifest_base"

// A row written before the summary columns existed (by a store of the
// schema before them, which leaves them to their defaults) lists as one
// without a summary, which the engine reads whole: the listing is the same
// as with the summary. A summary the store cannot keep exactly (a NUL, which
// PostgreSQL's text refuses; a description over the limit) is not stored
// either, and lists the same way.
func TestListWithoutSummary(t *testing.T) {
	sqlBackends(t, func(t *testing.T, s helm3.Store, b *sqlbackend.Backend) {
		ctx := context.Background()
		var rs []*release.Release
		for i, name := range []string{"old", "new", "nul", "long"} {
			r := sqltest.Release(name, "legacy", 1)
			r.Chart.Metadata.AppVersion = "2.0"
			r.Info.Description = "Install complete"
			r.Info.LastDeployed = helmtime.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC).Add(time.Duration(i) * time.Hour)}
			r.Labels = map[string]string{"team": name}
			rs = append(rs, r)
		}
		rs[2].Chart = &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "1.0.0"}, Templates: rs[2].Chart.Templates}
		rs[2].Info.Description = "a NUL \x00 in it"
		rs[3].Info.Description = strings.Repeat("long ", 300_000)
		for _, r := range rs {
			if err := s.Namespace(r.Namespace).Create(sqltest.Key(r.Name, r.Version), r); err != nil {
				t.Fatal(err)
			}
		}
		want, err := s.Namespace("legacy").Summaries(ctx, helm3.SummaryQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(want.Summaries) != 4 || want.Summaries[2].Description != rs[2].Info.Description || want.Summaries[0].Description != rs[3].Info.Description {
			t.Fatalf("Summaries = %+v, want the 4 releases with their descriptions", want.Summaries)
		}

		// Write "old" again as the schema before the summary did.
		key := sqltest.Key("old", 1)
		cols := strings.Split(preSummaryColumns, ", ")
		vals := make([]any, len(cols))
		dest := make([]any, len(cols))
		for i := range vals {
			dest[i] = &vals[i]
		}
		q := b.Dialect().Rebind("SELECT " + preSummaryColumns + " FROM helmstore_releases WHERE namespace = ? AND release_key = ?")
		if err := b.DB().QueryRowContext(ctx, q, "legacy", key).Scan(dest...); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Exec(ctx, "DELETE FROM helmstore_releases WHERE namespace = ? AND release_key = ?", "legacy", key); err != nil {
			t.Fatal(err)
		}
		if _, err := b.Exec(ctx, "INSERT INTO helmstore_releases ("+preSummaryColumns+") VALUES ("+strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",")+")", vals...); err != nil {
			t.Fatal(err)
		}

		hs, err := b.List(ctx, driver.ListQuery{Namespace: "legacy"})
		if err != nil {
			t.Fatal(err)
		}
		has := map[string]bool{}
		for _, h := range hs {
			if h.Err != nil {
				t.Fatalf("List: %s: %v", h.Key, h.Err)
			}
			has[h.Name] = h.HasSummary
			if !h.HasSummary && (h.ChartName != "" || h.Description != "") {
				t.Fatalf("List: %s has no summary but fields %q %q", h.Name, h.ChartName, h.Description)
			}
		}
		if fmt.Sprint(has) != "map[long:false new:true nul:false old:false]" {
			t.Fatalf("List: HasSummary by release %v; want only new's", has)
		}
		got, err := s.Namespace("legacy").Summaries(ctx, helm3.SummaryQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after the row was written without its summary, Summaries =\n%+v\nwant\n%+v", got, want)
		}
	})
}
