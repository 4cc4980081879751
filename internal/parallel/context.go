package parallel

import (
	"context"

	"golang.org/x/sync/errgroup"
)

// Run calls fn(ctx, 0), ..., fn(ctx, n-1) with at most limit calls in flight
// (limit <= 0: no bound) and returns the first error once all have
// returned. A failure does not cancel the others: each call is, for
// example, a request whose own cleanup expects it to have run to its end.
// With one item, fn runs on the caller's goroutine.
func Run(ctx context.Context, n, limit int, fn func(ctx context.Context, i int) error) error {
	if n == 1 {
		return fn(ctx, 0)
	}
	var g errgroup.Group
	if limit > 0 {
		g.SetLimit(limit)
	}
	for i := 0; i < n; i++ {
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}
