package engine

import (
	"context"

	"github.com/helmstore/helmstore/driver"
)

// Collect removes the garbage the backend holds in the view's namespace
// (every namespace for the "" view), if it is a driver.Collector; for a backend
// whose writes leave none, it does nothing.
func (v *View[R]) Collect(ctx context.Context) error {
	c, ok := v.e.backend.(driver.Collector)
	if !ok || !v.validNamespace() {
		return nil
	}
	if err := c.Collect(ctx, v.ns); err != nil {
		return v.fail("collect", v.ns, "", err)
	}
	return nil
}

// Garbage reports what Collect would remove now, removing nothing (zero
// for a backend whose writes leave none).
func (v *View[R]) Garbage(ctx context.Context) (driver.Garbage, error) {
	c, ok := v.e.backend.(driver.Collector)
	if !ok || !v.validNamespace() {
		return driver.Garbage{}, nil
	}
	g, err := c.Garbage(ctx, v.ns)
	if err != nil {
		return driver.Garbage{}, v.fail("garbage", v.ns, "", err)
	}
	return g, nil
}
