package cas

import (
	"context"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
)

// Update replaces the head stored under h.Key; the last writer wins, as in
// Helm's own drivers. The head object is replaced at the version this store
// last saw (read first if it has seen none), after the parts the release
// newly references gained it as referrer. If another writer changed it
// since, it is read again and written over that version, retried as the
// retry policy allows: only a write that keeps losing until then fails,
// with ErrConflict, and writes no head. Parts the replaced version
// referenced and the new one does not then lose the head as referrer, and
// are deleted when no other live head refers to them.
//
// The store's own Updates of one release run one at a time, after the
// release's background commit.
func (b *Backend) Update(ctx context.Context, h *backend.Head, parts []*codec.Part) error {
	unlock, err := b.writing.lock(ctx, h.Namespace, h.Key)
	if err != nil {
		return err
	}
	defer unlock()
	if err := b.commits.wait(ctx, h.Namespace, h.Key); err != nil {
		return err
	}
	old, ok := b.seen.get(h.Namespace, h.Key)
	if !ok {
		if old, err = b.getCommitted(ctx, h.Namespace, h.Key); err != nil {
			return err
		}
	}
	body := b.splitBody(h)
	var (
		updated *Object
		drop    []backend.PartRef
	)
	err = b.cfg.Retry.Do(ctx, fmt.Sprintf("update release %q in namespace %q", h.Key, h.Namespace), func(ctx context.Context) (bool, error) {
		obj, gone, err := b.put(ctx, h, parts, old, body)
		switch {
		case err == nil:
			updated, drop = obj, gone
			return true, nil
		case errors.Is(err, ErrVersionMismatch):
			// Changed since old: write over what it is now.
			b.seen.forget(h.Namespace, h.Key, old.Version)
			cur, err := b.getCommitted(ctx, h.Namespace, h.Key)
			if err != nil {
				return true, err
			}
			old = cur
			return false, nil
		case errors.Is(err, ErrNotFound):
			b.seen.forget(h.Namespace, h.Key, old.Version)
			return true, driver.ErrReleaseNotFound
		}
		return true, err
	})
	if err != nil {
		return err
	}
	b.seen.saw(updated)
	return b.dropUnreferenced(ctx, old, updated, drop)
}

// put writes h over the head object old, at old's version, after storing
// the parts h references that old does not, and returns it as written with
// the references old holds and h does not.
func (b *Backend) put(ctx context.Context, h *backend.Head, parts []*codec.Part, old *Object, body *headBody) (*Object, []backend.PartRef, error) {
	oldH, err := refsHead(old)
	if err != nil {
		return nil, nil, err
	}
	h.KeepCreatedAt(oldH)
	add, drop, err := backend.DiffStoredParts(oldH, h, parts)
	if err != nil {
		return nil, nil, err
	}
	embedded, add := b.embedParts(h, add, carriedFrames(old, h))
	drop = objectRefs(old, drop)
	if err := b.writeReferenced(ctx, h.Namespace, add, old, body); err != nil {
		return nil, nil, err
	}
	if hook := b.cfg.Hooks.BeforePut; hook != nil {
		if err := hook(h); err != nil {
			return nil, nil, err
		}
	}
	obj := b.headObject(h, body, embedded)
	obj.UID, obj.Version, obj.Created = old.UID, old.Version, old.Created
	answer, err := b.s.Replace(ctx, obj)
	if err != nil {
		return nil, nil, err
	}
	return stored(obj, answer), drop, nil
}

// dropUnreferenced cleans up what old referenced and updated does not: the
// parts gone (the head stops referring to them) and an old chunked body.
func (b *Backend) dropUnreferenced(ctx context.Context, old, updated *Object, gone []backend.PartRef) error {
	var chunks []string
	if cs := old.Head.BodyChunks; cs != nil && (updated.Head.BodyChunks == nil || updated.Head.BodyChunks.ID != cs.ID) {
		chunks = bodyChunkNames(old, cs)
	}
	err := b.parallel(ctx, len(gone)+1, func(ctx context.Context, i int) error {
		if i == len(gone) {
			return b.deleteChunks(ctx, old.Namespace, chunks)
		}
		return b.cleanupPart(ctx, old.Namespace, gone[i].Kind, gone[i].Digest, old.UID)
	})
	if err != nil {
		return fmt.Errorf("release updated, but what it no longer references could not be cleaned up: %w", err)
	}
	return nil
}
