package memstore

import (
	"context"

	"github.com/helmstore/helmstore/driver"
)

// Heads returns the heads matching q, ordered by namespace, name and
// version. A real store selects with its indexes (a WHERE clause, a label
// selector, an index set) as far as they go, and filters the rest with
// q.Matches; here every head of the namespace (or of all of them) is
// scanned, or the one under q.Key.
func (b *memBackend) Heads(ctx context.Context, q driver.Query) ([]*driver.Head, error) {
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	b.s.mu.RLock()
	defer b.s.mu.RUnlock()
	var out []*driver.Head
	for ns, heads := range b.s.heads {
		if q.Namespace != "" && ns != q.Namespace {
			continue
		}
		if q.Key != "" {
			if r, ok := heads[q.Key]; ok && q.Matches(&r.head) {
				out = append(out, r.read())
			}
			continue
		}
		for _, r := range heads {
			if q.Matches(&r.head) {
				out = append(out, r.read())
			}
		}
	}
	driver.SortHeads(out)
	return out, nil
}

// List returns the heads q selects with their summary. A real store reads
// only the index fields and summary of the heads (columns, hash fields,
// object fields), selecting with its indexes as far as they go; here every
// head of the namespace is scanned and q.Select applies the query.
func (b *memBackend) List(ctx context.Context, q driver.ListQuery) ([]*driver.Head, error) {
	hs, err := b.Heads(ctx, driver.Query{Namespace: q.Namespace})
	if err != nil {
		return nil, err
	}
	return q.Select(hs), nil
}
