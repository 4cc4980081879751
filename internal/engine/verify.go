package engine

import (
	"context"

	"github.com/helmstore/helmstore/driver"
)

// Verify reads every revision stored in the view's namespace (every
// namespace for the "" view) as Get reads it: its head, its parts with
// their digests and seals, and its decoding. It calls bad with each one
// that cannot be read, as a *driver.ReleaseError naming it, and returns
// the number of revisions read, or the error that stopped it (the
// backend's listing failed, ctx ended). Unlike List, which skips what it
// cannot read, it misses no revision whose head the backend lists, damaged
// or not.
func (v *View[R]) Verify(ctx context.Context, bad func(*driver.ReleaseError)) (int, error) {
	if !v.validNamespace() {
		return 0, nil
	}
	hs, err := v.e.heads(ctx, driver.Query{Namespace: v.ns})
	if err != nil {
		return 0, v.fail("verify", v.ns, "", err)
	}
	for _, h := range hs {
		if err := ctx.Err(); err != nil {
			return 0, v.fail("verify", v.ns, "", err)
		}
		err := h.Err
		if err == nil {
			var parts *partSet
			parts, err = v.e.load(ctx, []*driver.Head{h})
			if err == nil {
				_, err = v.e.assemble(h, parts, h.Labels)
			}
		}
		if err != nil {
			bad(&driver.ReleaseError{Op: "verify", Namespace: h.Namespace, Key: h.Key, Err: err})
		}
	}
	return len(hs), nil
}
