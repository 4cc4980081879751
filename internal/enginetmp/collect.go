package backend

import (
	"context"

	"github.com/helmstore/helmstore/helm3"
)

var _ helm3.Collector = (*view)(nil)

// Collect removes the garbage the backend holds in the view's namespace
// (every namespace for the "" view), if it is a Collector; for a backend
// whose writes leave none, it does nothing.
func (v *view) Collect(ctx context.Context) error {
	c, ok := v.e.backend.(Collector)
	if !ok || !v.validNamespace() {
		return nil
	}
	if err := c.Collect(ctx, v.ns); err != nil {
		return v.fail("collect", v.ns, "", err)
	}
	return nil
}
