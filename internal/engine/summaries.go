package engine

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
)

// listPage is the number of heads asked of the backend at a time when a
// Filter drops some of what it returns.
const listPage = 1000

// Summaries returns a page of the summary listing q selects in the view's
// namespace (driver.SummaryQuery), from the backend's List: no part and no
// head body is read, except for a revision stored before its backend kept
// summaries, which is read whole. A revision whose head cannot be read is
// logged and skipped, as List skips it.
func (v *View[R]) Summaries(ctx context.Context, q driver.SummaryQuery) (driver.SummaryPage, error) {
	if v.e.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, v.e.cfg.Timeout)
		defer cancel()
	}
	page, err := v.summaries(ctx, q)
	if err != nil {
		return driver.SummaryPage{}, v.fail("summaries", v.ns, "", err)
	}
	return page, nil
}

func (v *View[R]) summaries(ctx context.Context, q driver.SummaryQuery) (driver.SummaryPage, error) {
	var filter *regexp.Regexp
	if q.Filter != "" {
		var err error
		if filter, err = regexp.Compile(q.Filter); err != nil {
			return driver.SummaryPage{}, fmt.Errorf("filter: %w", err)
		}
	}
	after, err := parsePageToken(q.PageToken)
	if err != nil {
		return driver.SummaryPage{}, err
	}
	if q.Limit < 0 {
		return driver.SummaryPage{}, fmt.Errorf("limit %d is negative", q.Limit)
	}
	var page driver.SummaryPage
	if !v.validNamespace() {
		return page, nil
	}
	bq := driver.ListQuery{Namespace: v.ns, NamePrefix: q.NamePrefix, Latest: !q.AllRevisions,
		Statuses: q.Statuses, Labels: q.Labels, After: after}
	for {
		// One more than wanted tells whether another page follows.
		if q.Limit > 0 {
			bq.Limit = q.Limit - len(page.Summaries) + 1
			if filter != nil {
				bq.Limit = max(bq.Limit, listPage)
			}
		}
		hs, err := v.e.backend.List(ctx, bq)
		if err != nil {
			return driver.SummaryPage{}, err
		}
		kept := hs[:0]
		for _, h := range hs {
			if filter == nil || filter.MatchString(h.Name) || h.Err != nil {
				kept = append(kept, h)
			}
		}
		ss, err := v.summarise(ctx, kept)
		if err != nil {
			return driver.SummaryPage{}, err
		}
		more := bq.Limit > 0 && len(hs) == bq.Limit // the backend may hold more
		for i, s := range ss {
			if s == nil {
				continue
			}
			page.Summaries = append(page.Summaries, *s)
			if q.Limit > 0 && len(page.Summaries) == q.Limit {
				if i+1 < len(ss) || more {
					page.NextPageToken = pageToken(driver.CursorOf(kept[i]))
				}
				return page, nil
			}
		}
		if !more {
			return page, nil
		}
		bq.After = driver.CursorOf(hs[len(hs)-1])
	}
}

// summarise returns the summaries of hs (nil for one that is skipped).
func (v *View[R]) summarise(ctx context.Context, hs []*driver.Head) ([]*driver.Summary, error) {
	out := make([]*driver.Summary, len(hs))
	var whole []int // heads stored without their summary
	for i, h := range hs {
		if h.Key == codec.KeyringKey {
			continue // an encrypted namespace's record, which a store with keys never lists
		}
		if h.Err != nil {
			v.e.cfg.Log("helmstore: skipping release %q in namespace %q that cannot be read: %v", h.Key, h.Namespace, h.Err)
			continue
		}
		if !h.HasSummary {
			whole = append(whole, i)
			continue
		}
		s, err := summaryOf(h)
		if err != nil {
			v.e.cfg.Log("helmstore: skipping release %q in namespace %q whose summary cannot be read: %v", h.Key, h.Namespace, err)
			continue
		}
		out[i] = s
	}
	for _, i := range whole {
		s, err := v.summaryRead(ctx, hs[i])
		if err != nil {
			if !errors.Is(err, driver.ErrCorrupt) {
				return nil, err
			}
			v.e.cfg.Log("helmstore: skipping release %q in namespace %q that cannot be decoded: %v", hs[i].Key, hs[i].Namespace, err)
			continue
		}
		out[i] = s
	}
	return out, nil
}

// summaryOf returns the summary h holds.
func summaryOf(h *driver.Head) (*driver.Summary, error) {
	s := &driver.Summary{Namespace: h.Namespace, StorageNamespace: h.Namespace, Name: h.Name, Revision: h.Version, Status: h.Status,
		Chart: h.ChartName, ChartVersion: h.ChartVersion, AppVersion: h.AppVersion,
		Description: h.Description, Labels: maps.Clone(h.Labels)}
	if own, ok := s.Labels[releaseNamespaceLabel]; ok {
		s.Namespace = own
		delete(s.Labels, releaseNamespaceLabel)
	}
	if h.Updated != "" {
		t, err := time.Parse(time.RFC3339Nano, h.Updated)
		if err != nil {
			return nil, fmt.Errorf("%w: updated time %q: %v", driver.ErrCorrupt, h.Updated, err)
		}
		s.Updated = t
	}
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	return s, nil
}

// summaryRead reads the release of h whole for its summary: h was stored
// before its backend kept summaries. Nil with no error if it is gone.
func (v *View[R]) summaryRead(ctx context.Context, h *driver.Head) (*driver.Summary, error) {
	hs, err := v.e.backend.Heads(ctx, driver.Query{Namespace: h.Namespace, Key: h.Key})
	if err != nil || len(hs) == 0 {
		return nil, err
	}
	rls, err := v.e.reread(ctx, hs[0], driver.Query{})
	if err != nil || rls == nil {
		return nil, err
	}
	m := v.e.codec.Meta(rls)
	full := *hs[0]
	full.ChartName, full.ChartVersion, full.AppVersion = m.ChartName, m.ChartVersion, m.AppVersion
	full.Updated, full.Description = m.Updated, m.Description
	full.Labels = withoutReleaseNamespace(full.Labels)
	sum, err := summaryOf(&full)
	if err == nil && m.Namespace != "" {
		sum.Namespace = m.Namespace
	}
	return sum, err
}

// pageToken encodes a cursor as an opaque page token.
func pageToken(c *driver.ListCursor) string {
	b, _ := json.Marshal([]any{c.Namespace, c.Name, c.Version})
	return base64.RawURLEncoding.EncodeToString(b)
}

// parsePageToken decodes a page token ("" is the start).
func parsePageToken(t string) (*driver.ListCursor, error) {
	if t == "" {
		return nil, nil
	}
	bad := errors.New("page token is not one a listing returned")
	b, err := base64.RawURLEncoding.DecodeString(t)
	if err != nil || len(b) > 1024 {
		return nil, bad
	}
	var c driver.ListCursor
	if err := json.Unmarshal(b, &[]any{&c.Namespace, &c.Name, &c.Version}); err != nil {
		return nil, bad
	}
	return &c, nil
}
