package cas

import (
	"context"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/caswire"
)

// Delete removes the head stored under key, then its parts that no other
// live head refers to. The parts the caller lacks are read first. The head
// object is deleted at the version read: if it changed after being read,
// it is read again, so what Delete returns is what it deleted. Deleting
// the head first means no reader ever sees it with parts missing; a crash
// before the parts are cleaned up leaves them referred to only by a head
// that no longer exists, which later cleanups of the same parts, Collect,
// or Kubernetes' garbage collector remove.
//
// Once the head is deleted, Delete succeeds: a cleanup that fails, or that
// its deadline cuts short, is logged and left to those, unless Config.Persistent says the error will
// recur on every Delete (missing rights), which is reported.
//
// A head that cannot be read (damaged outside the protocol) is deleted
// too, returned as a head with only Namespace, Key and Err; when its
// digests cannot be trusted, what it refers to is found by listing.
func (b *Backend) Delete(ctx context.Context, ns, key string, have func(driver.Digest) bool) (*driver.Head, map[driver.Digest][]byte, error) {
	var (
		obj    *Object
		h      *driver.Head
		frames map[driver.Digest][]byte
	)
	if err := b.bg.wait(ctx, ns, key); err != nil {
		return nil, nil, err
	}
	err := b.retry(ctx, fmt.Sprintf("delete release %q in namespace %q", key, ns), func(ctx context.Context) (bool, error) {
		var err error
		if obj, h, frames, err = b.readForDelete(ctx, ns, key, have); err != nil {
			return true, err
		}
		if ok, err := b.passLatest(ctx, obj); !ok || err != nil {
			return err != nil, err
		}
		err = b.s.Delete(ctx, obj.Ref(), obj.Version)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, ErrNotFound):
			b.seen.forget(ns, key, obj.Version)
			return true, driver.ErrReleaseNotFound
		case errors.Is(err, ErrVersionMismatch):
			return false, nil
		case b.deletedAnyway(obj):
			return true, nil // the answer was lost, not the delete
		}
		return true, err
	})
	if err != nil {
		return nil, nil, err
	}
	b.seen.forget(ns, key, obj.Version)
	// The cleanup goes on when the caller gives up (a cancel), but not
	// past the Delete's own deadline: the release is gone, and what a
	// cleanup cut short leaves is for later cleanups and Collect.
	cctx, cancel := b.cleanupContext()
	defer cancel()
	if dl, ok := ctx.Deadline(); ok {
		var cancelDl context.CancelFunc
		cctx, cancelDl = context.WithDeadline(cctx, dl)
		defer cancelDl()
	}
	cleanup := b.cleanupHead
	if h.Verify() != nil {
		cleanup = b.cleanupReferred
	}
	if err := cleanup(cctx, obj); err != nil && b.cfg.Persistent != nil && b.cfg.Persistent(err) {
		return nil, nil, fmt.Errorf("release deleted, but its parts could not be cleaned up: %w", err)
	} else if err != nil {
		b.log("helmstore: release %q in namespace %q deleted, but what it referred to is not all cleaned up (the next cleanup of the same parts removes it): %v",
			key, ns, err)
	}
	b.sweepPending(cctx, ns)
	return h, frames, nil
}

// deletedAnyway reports, after a delete of obj failed otherwise than with
// a sentinel, whether obj is gone all the same.
func (b *Backend) deletedAnyway(obj *Object) bool {
	ctx, cancel := b.cleanupContext()
	defer cancel()
	m, err := b.s.Get(ctx, obj.Ref(), ReadOptions{Meta: true})
	return errors.Is(err, ErrNotFound) || err == nil && m.UID != obj.UID
}

// readForDelete reads the head object to delete, its head and the frames
// of the parts the caller lacks. A head object that cannot be read is
// returned as far as it decodes, with a head that has Err set.
func (b *Backend) readForDelete(ctx context.Context, ns, key string, have func(driver.Digest) bool) (*Object, *driver.Head, map[driver.Digest][]byte, error) {
	obj, err := b.getCommitted(ctx, ns, key)
	var h *driver.Head
	if err == nil {
		h, err = b.headOf(obj)
	}
	if err == nil {
		err = b.loadBody(ctx, obj, h)
	}
	if errors.Is(err, driver.ErrCorrupt) {
		raw, gerr := b.getHead(ctx, ns, b.cfg.HeadName(key))
		if gerr != nil {
			return nil, nil, nil, gerr
		}
		if raw == nil {
			return nil, nil, nil, driver.ErrReleaseNotFound
		}
		return raw, damagedHead(raw, key, err), nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	read, _ := driver.PlanDelete(h, have)
	frames, err := b.Parts(ctx, read)
	if err != nil {
		return nil, nil, nil, err
	}
	return obj, h, frames, nil
}

// cleanupReferred is cleanupHead for a head whose digests cannot be
// trusted: every part and chunk of the namespace it is a referrer of is
// found by listing, and cleaned up as cleanupHead would. The parts its
// digests name that it is no referrer of are left alone (they may be
// another release's).
func (b *Backend) cleanupReferred(ctx context.Context, head *Object) error {
	var parts []*Object
	var chunks []string
	for _, k := range []Kind{KindChart, KindValues, KindManifest, KindChunk} {
		objs, err := b.s.List(ctx, Selector{Kind: k, Namespace: head.Namespace, Meta: true})
		if err != nil {
			return err
		}
		for _, o := range objs {
			if !o.ReferredBy(head.UID) {
				continue
			}
			if k == KindChunk {
				chunks = append(chunks, o.Name)
			} else {
				parts = append(parts, o)
			}
		}
	}
	return b.parallel(ctx, len(parts)+1, func(ctx context.Context, i int) error {
		if i == len(parts) {
			return b.deleteChunks(ctx, head.Namespace, chunks)
		}
		d, err := driver.ParseDigest(parts[i].Name)
		if err != nil {
			return nil // not a part the protocol wrote
		}
		return b.cleanupPart(ctx, head.Namespace, partCodecKind(parts[i].Kind), d, head.UID)
	})
}

// partCodecKind is the inverse of partKind.
func partCodecKind(k Kind) driver.Kind { return caswire.PartCodecKind(uint8(k)) }
