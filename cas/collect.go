package cas

import (
	"context"
	"errors"
	"fmt"
)

// Collect removes the garbage of namespace ns ("": every namespace) that
// no operation is bound to meet again: abandoned pending heads (committed
// if complete, else removed with what only they refer to), part objects
// none of whose referrers is a live head, and chunk objects whose object
// is gone. It is what Kubernetes' garbage collector does for crsplit's
// parts and chunks, for stores that have none, and it removes the pending
// heads that collector does not; users reach it through helm3.Collect.
// Run it now and then (it lists every object of the namespace): after a
// writer died, or writes failed with driver.ErrUnavailable. Parts a head
// refers to without referencing them (left by an Update that failed after
// storing them) stay until that head is deleted.
//
// Collect never removes what a live head refers to: a part is deleted at
// the version at which it was found without live referrers, so a referrer
// added meanwhile saves it.
func (b *Backend) Collect(ctx context.Context, ns string) error {
	// Chunks first, then parts, then heads: an object is always created
	// after the object it belongs to, so an owner created after the
	// listing of its chunks is not needed to save them.
	chunks, err := b.s.List(ctx, Selector{Kind: KindChunk, Namespace: ns, Meta: true})
	if err != nil {
		return err
	}
	parts, err := b.listParts(ctx, ns)
	if err != nil {
		return err
	}
	b.sweepPending(ctx, ns)
	heads, err := b.s.List(ctx, Selector{Kind: KindHead, Namespace: ns, Meta: true})
	if err != nil {
		return err
	}
	live := map[string]bool{}
	for _, h := range heads {
		live[h.UID] = true
	}
	var errs []error
	var candidates []*Object
	for _, p := range parts {
		if !anyLive(p.Referrers, live) {
			candidates = append(candidates, p)
		}
	}
	err = b.parallel(ctx, len(candidates), func(ctx context.Context, i int) error {
		ref := candidates[i].Ref()
		return b.retry(ctx, fmt.Sprintf("collect part %s", ref.Name), func(ctx context.Context) (bool, error) {
			obj, err := b.s.Get(ctx, ref, ReadOptions{})
			if errors.Is(err, ErrNotFound) {
				return true, nil
			}
			if err != nil {
				return true, err
			}
			return b.collectPart(ctx, obj, "")
		})
	})
	if err != nil {
		errs = append(errs, err)
	}
	// The parts as they are now: those just deleted are gone.
	owners := map[string]bool{}
	for k := range live {
		owners[k] = true
	}
	now, err := b.listParts(ctx, ns)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, o := range now {
		owners[o.UID] = true
	}
	var dead []*Object
	for _, c := range chunks {
		if !anyLive(c.Referrers, owners) {
			dead = append(dead, c)
		}
	}
	err = b.parallel(ctx, len(dead), func(ctx context.Context, i int) error {
		if err := b.s.Delete(ctx, dead[i].Ref(), ""); err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		return nil
	})
	if err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// anyLive reports whether one of refs is in live, or is not the protocol's
// (a referrer of kind 0 is never taken for dead).
func anyLive(refs []Referrer, live map[string]bool) bool {
	for _, r := range refs {
		if r.Kind == 0 || live[r.UID] {
			return true
		}
	}
	return false
}

// listParts lists the metadata of every part object (charts, values,
// manifests) of namespace ns ("": every namespace).
func (b *Backend) listParts(ctx context.Context, ns string) ([]*Object, error) {
	var parts []*Object
	for _, k := range []Kind{KindChart, KindValues, KindManifest} {
		objs, err := b.s.List(ctx, Selector{Kind: k, Namespace: ns, Meta: true})
		if err != nil {
			return nil, err
		}
		parts = append(parts, objs...)
	}
	return parts, nil
}
