package cli

import (
	"context"
	"fmt"
	"sort"

	rspb "helm.sh/helm/v4/pkg/release/v1"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm4"
	"github.com/helmstore/helmstore/internal/registry"
	"github.com/helmstore/helmstore/migrate"
)

// openHelmstore opens the helmstore store --driver names, for the
// inspection commands (list, history, status, get). Helm's own drivers are
// refused: helm itself shows what they hold.
func (e *env) openHelmstore(ctx context.Context) (helm4.Store, error) {
	name := e.storeName()
	if registry.IsHelmDriver(name) {
		return nil, fmt.Errorf("%s is Helm's own driver: helm list, history, status and get show what it holds; helmstore shows helmstore stores (--driver postgres, mysql, sqlite, redis, cosmos, crsplit)", name)
	}
	s, err := e.open(ctx, name, e.conn)
	if err != nil {
		return nil, err
	}
	h, ok := migrate.Helmstore(s)
	if !ok {
		s.Close()
		return nil, fmt.Errorf("%s is not a helmstore store", name)
	}
	return h, nil
}

// summaries returns every entry of the summary listing q selects in s,
// reading it page by page.
func summaries(ctx context.Context, s helm4.Store, q driver.SummaryQuery) ([]driver.Summary, error) {
	q.Limit = 1000
	var out []driver.Summary
	for {
		p, err := s.Summaries(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Summaries...)
		if p.NextPageToken == "" {
			return out, nil
		}
		q.PageToken = p.NextPageToken
	}
}

// revisions returns the summaries of every revision of release name in s
// (a namespace's view), oldest first; Helm's "release: not found" if it
// has none.
func revisions(ctx context.Context, s helm4.Store, name string) ([]driver.Summary, error) {
	all, err := summaries(ctx, s, driver.SummaryQuery{AllRevisions: true, NamePrefix: name})
	if err != nil {
		return nil, err
	}
	var out []driver.Summary
	for _, r := range all {
		if r.Name == name {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil, helmdriver.ErrReleaseNotFound
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Revision < out[j].Revision })
	return out, nil
}

// readRelease reads revision rev of release name from s (a namespace's
// view); rev 0 is the latest, found from the summary listing.
func readRelease(ctx context.Context, s helm4.Store, name string, rev int) (*rspb.Release, error) {
	if rev <= 0 {
		revs, err := revisions(ctx, s, name)
		if err != nil {
			return nil, err
		}
		rev = revs[len(revs)-1].Revision
	}
	r, err := s.Get(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, rev))
	if err != nil {
		return nil, err
	}
	rel, ok := r.(*rspb.Release)
	if !ok {
		return nil, fmt.Errorf("release %s revision %d: unexpected type %T", name, rev, r)
	}
	return rel, nil
}

// chartColumns are the CHART and APP VERSION of a summary as helm prints
// them; MISSING for a release without a chart, as in helm.
func chartColumns(s driver.Summary) (chart, appVersion string) {
	if s.Chart == "" {
		return "MISSING", "MISSING"
	}
	return s.Chart + "-" + s.ChartVersion, s.AppVersion
}
