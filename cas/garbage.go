package cas

import (
	"context"

	"github.com/helmstore/helmstore/driver"
)

// Garbage reports what Collect would remove from namespace ns ("": every
// namespace) if it ran now, removing nothing: abandoned pending heads
// (which Collect settles: commits if complete, else removes), parts no
// head refers to, and chunks whose object is gone. The parts an abandoned
// head alone refers to are not counted, since Collect keeps them if it
// commits the head. Like Collect, it lists every object of the namespace.
func (b *Backend) Garbage(ctx context.Context, ns string) (driver.Garbage, error) {
	var g driver.Garbage
	chunks, err := b.s.List(ctx, Selector{Kind: KindChunk, Namespace: ns, Meta: true})
	if err != nil {
		return g, err
	}
	heads, err := b.s.List(ctx, Selector{Kind: KindHead, Namespace: ns, Meta: true})
	if err != nil {
		return g, err
	}
	live := map[string]bool{}
	for _, h := range heads {
		if b.stale(h) {
			g.PendingHeads++
		}
		live[h.UID] = true
	}
	owners := map[string]bool{}
	for k := range live {
		owners[k] = true
	}
	parts, err := b.listParts(ctx, ns)
	if err != nil {
		return g, err
	}
	for _, p := range parts {
		if anyLive(p.Referrers, live) {
			owners[p.UID] = true
			continue
		}
		g.Parts++
		g.Bytes += p.StoredBytes
	}
	for _, c := range chunks {
		if !anyLive(c.Referrers, owners) {
			g.Chunks++
			g.Bytes += c.StoredBytes
		}
	}
	return g, nil
}
