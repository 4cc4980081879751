package redis

import (
	"context"

	"github.com/helmstore/helmstore/driver"
)

// List returns the heads q selects. The summary is not stored yet: the
// heads come back without it (HasSummary false) and the engine reads the
// releases whole.
func (b *redisBackend) List(ctx context.Context, q driver.ListQuery) ([]*driver.Head, error) {
	hs, err := b.Heads(ctx, driver.Query{Namespace: q.Namespace})
	if err != nil {
		return nil, err
	}
	out := q.Select(hs)
	for _, h := range out {
		h.HasSummary = false
	}
	return out, nil
}
