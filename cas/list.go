package cas

import (
	"context"
	"errors"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/caswire"
)

// List returns the heads q selects, from one listing of head objects (no
// part object, no chunk): each with its index fields, labels and summary
// as its record holds them. A committed head is taken as listed; a pending
// one is read as Heads reads it (visible only once its parts are all
// stored), and a damaged one is returned with Err. Labels and a single
// status are selected by the store's index where Latest does not need
// every revision; the rest is applied with Select. The heads come back
// without Body and Frames. The store is asked for the heads' summaries
// only (Selector.Summary); a head it returns so is taken as it is when
// committed, and read whole otherwise.
func (b *Backend) List(ctx context.Context, q driver.ListQuery) ([]*driver.Head, error) {
	hq := driver.Query{Namespace: q.Namespace}
	if !q.Latest {
		hq.Labels = q.Labels
		if len(q.Statuses) == 1 {
			hq.Status = q.Statuses[0]
		}
	}
	sel := selector(hq, b.cfg.HeadName)
	sel.Summary = true
	if q.Latest {
		// The latest revision of each release is marked (latest.go).
		sel.Not = map[string]string{caswire.LabelLatest: caswire.LatestRetired}
	}
	objs, err := b.s.List(ctx, sel)
	if err != nil {
		return nil, err
	}
	hs := make([]*driver.Head, 0, len(objs))
	for i, obj := range objs {
		objs[i] = nil // let the records go as they are read
		h, err := b.listedHead(ctx, obj)
		if err != nil {
			return nil, err
		}
		if h != nil {
			h.Body, h.Frames = nil, nil
			hs = append(hs, h)
		}
	}
	return q.Select(hs), nil
}

// listedHead returns the head obj holds for List: nil if it is not
// visible, with Err if it cannot be read.
func (b *Backend) listedHead(ctx context.Context, obj *Object) (*driver.Head, error) {
	if obj.Err == nil && isHidden(obj) {
		return nil, nil
	}
	if obj.SummaryOnly {
		if obj.Err == nil && obj.Head != nil && !isPending(obj) {
			if h, err := b.summaryHead(obj); err == nil {
				return h, nil
			}
		}
		// Pending, without its summary or with one that does not match
		// the object: read whole, then as below.
		whole, err := b.s.Get(ctx, obj.Ref(), ReadOptions{})
		if errors.Is(err, ErrNotFound) {
			return nil, nil // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		return b.listedHead(ctx, whole)
	}
	if obj.Err == nil && !isPending(obj) {
		if obj.Head != nil {
			obj.Head.Embedded = nil // not returned, so not looked up either
		}
		h, err := b.headOf(obj)
		if err == nil {
			return h, nil
		}
		if !errors.Is(err, driver.ErrCorrupt) {
			return nil, err
		}
	}
	// Pending or damaged: as Heads reads it (which reads it again).
	return b.headOrDamaged(ctx, obj, driver.Query{})
}
