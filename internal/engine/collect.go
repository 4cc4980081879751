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
