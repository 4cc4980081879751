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
