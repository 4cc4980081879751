package face

import (
	"context"
	"fmt"

	"github.com/helmstore/helmstore/driver"
)

// Collector is implemented by the stores whose backend can leave garbage
// behind (each face's Collect documents it).
type Collector interface {
	// Collect removes the garbage of the store's namespace (every
	// namespace for the "" view), within ctx.
	Collect(ctx context.Context) error
}

// Verifier is implemented by every helmstore store (each face's Verify
// documents it).
type Verifier interface {
	// Verify reads every revision of the store's namespace (every
	// namespace for the "" view), within ctx.
	Verify(ctx context.Context, bad func(*driver.ReleaseError)) (int, error)
}

// Collect is a face's Collect: s's if it is a Collector, else nothing.
func Collect(ctx context.Context, s any) error {
	if c, ok := s.(Collector); ok {
		return c.Collect(ctx)
	}
	return nil
}

// GarbageOf is a face's GarbageOf: what s's Collect would remove, zero for
// a store that never leaves garbage.
func GarbageOf(ctx context.Context, s any) (driver.Garbage, error) {
	if g, ok := s.(interface {
		Garbage(context.Context) (driver.Garbage, error)
	}); ok {
		return g.Garbage(ctx)
	}
	return driver.Garbage{}, nil
}

// Verify is a face's Verify: s's, which every helmstore store has.
func Verify(ctx context.Context, s any, bad func(*driver.ReleaseError)) (int, error) {
	v, ok := s.(Verifier)
	if !ok {
		return 0, fmt.Errorf("%T cannot verify its revisions", s)
	}
	return v.Verify(ctx, bad)
}
