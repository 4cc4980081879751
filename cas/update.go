package cas

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/caswire"
)

// Update replaces the head stored under h.Key; the last writer wins, as in
// Helm's own drivers. The head object is replaced at the version this store
// last saw (read first if it has seen none), after the parts the release
// newly references gained it as referrer. If another writer changed it
// since, it is read again and written over that version, retried as the
// retry policy allows: only a write that keeps losing until then fails,
// with ErrConflict, and writes no head. Parts the replaced version
// referenced and the new one does not then lose the head as referrer, and
// are deleted when no other live head refers to them. An Update that finds
// the head gone (deleted by another client since this store saw it)
// removes the referrers it added for it (unwrite) before reporting
// driver.ErrReleaseNotFound.
//
// The store's own Updates of one release run one at a time, after the
// release's background commit.
func (b *Backend) Update(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	unlock, err := b.writing.lock(ctx, h.Namespace, h.Key)
	if err != nil {
		return err
	}
	defer unlock()
	if err := b.bg.wait(ctx, h.Namespace, h.Key); err != nil {
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
		drop    []driver.PartRef
	)
	err = b.retry(ctx, fmt.Sprintf("update release %q in namespace %q", h.Key, h.Namespace), func(ctx context.Context) (bool, error) {
		obj, gone, w, err := b.put(ctx, h, parts, old, body)
		switch {
		case err == nil:
			updated, drop = obj, gone
			return true, nil
		case errors.Is(err, ErrVersionMismatch):
			// Changed since old: write over what it is now.
			b.seen.forget(h.Namespace, h.Key, old.Version)
			cur, err := b.getCommitted(ctx, h.Namespace, h.Key)
			if err == nil && cur.UID != old.UID || errors.Is(err, driver.ErrReleaseNotFound) {
				b.unwrite(w) // old's head is gone: deleted, or deleted and created again
			}
			if err != nil {
				return true, err
			}
			old = cur
			return false, nil
		case errors.Is(err, ErrNotFound):
			b.seen.forget(h.Namespace, h.Key, old.Version)
			b.unwrite(w)
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
// the references old holds and h does not. What it wrote under old's UID
// before the head's write is returned also when that write fails.
func (b *Backend) put(ctx context.Context, h *driver.Head, parts []*driver.Part, old *Object, body *headBody) (*Object, []driver.PartRef, *written, error) {
	oldH, err := refsHead(old)
	if err != nil {
		return nil, nil, nil, err
	}
	h.KeepCreatedAt(oldH)
	// The object's references were recorded by compare-and-swap, apart
	// from its body, which oldH lacks: vouch for them (driver.DiffParts).
	oldH.Seal(nil)
	add, drop, err := driver.DiffParts(oldH, h, parts)
	if err != nil {
		return nil, nil, nil, err
	}
	carried, heal := carriedFrames(old, h), driver.Rewrites(h, add, parts)
	for i := 0; i < len(heal); i++ {
		// A damaged frame old embeds is embedded again, from h's bytes;
		// a part object is healed, old (this UID) already among its
		// referrers.
		d := heal[i].Digest.String()
		if j := slices.IndexFunc(carried, func(e EmbeddedFrame) bool { return e.Digest == d }); j >= 0 {
			carried = slices.Delete(carried, j, j+1)
			add = append(add, heal[i])
			heal = slices.Delete(heal, i, i+1)
			i--
		}
	}
	embedded, add := b.embedParts(h, add, carried)
	drop = objectRefs(old, drop)
	w := &written{head: old, parts: add}
	if body.chunks != nil {
		w.chunks = bodyChunkNames(old, body.chunks)
	}
	if err := b.writeReferenced(ctx, h.Namespace, append(slices.Clone(add), heal...), old, body); err != nil {
		return nil, nil, w, err
	}
	if hook := b.hooks().BeforePut; hook != nil {
		if err := hook(h); err != nil {
			return nil, nil, w, err
		}
	}
	obj := b.headObject(h, body, embedded)
	if v, ok := old.Labels[caswire.LabelLatest]; ok {
		obj.Labels = withLatest(obj.Labels, v) // the index is kept as it is
	}
	obj.UID, obj.Version, obj.Created = old.UID, old.Version, old.Created
	answer, err := b.s.Replace(ctx, obj)
	if err != nil {
		return nil, nil, w, err
	}
	return stored(obj, answer), drop, w, nil
}

// written is what an attempt of Update stored for the head object head,
// under its UID, before writing the head: the parts it made referred to by
// it, and the chunks of its new body.
type written struct {
	head   *Object
	parts  []*driver.Part
	chunks []string
}

// unwrite undoes w once w.head is known to be gone (deleted, or replaced
// by another incarnation, whose UID differs): its UID leaves the parts w
// made it a referrer of, each deleted if no live head refers to it any
// more, and the body chunks are deleted. Nothing else removes them: the
// cleanups of later writes visit the parts their own heads reference, and
// no head references these by that UID.
func (b *Backend) unwrite(w *written) {
	if w == nil || len(w.parts) == 0 && len(w.chunks) == 0 {
		return
	}
	ctx, cancel := b.cleanupContext()
	defer cancel()
	ns := w.head.Namespace
	err := b.parallel(ctx, len(w.parts)+1, func(ctx context.Context, i int) error {
		if i == len(w.parts) {
			return b.deleteChunks(ctx, ns, w.chunks)
		}
		p := w.parts[i]
		return b.cleanupPart(ctx, ns, p.Kind, p.Digest, w.head.UID)
	})
	if err != nil {
		b.log("helmstore: release %q in namespace %q was deleted during an update, and what the update stored for it is not all cleaned up (Collect removes it): %v",
			b.keyOf(w.head), ns, err)
	}
}

// dropUnreferenced cleans up what old referenced and updated does not: the
// parts gone (the head stops referring to them) and an old chunked body.
func (b *Backend) dropUnreferenced(ctx context.Context, old, updated *Object, gone []driver.PartRef) error {
	var body *chunkSet
	if cs := old.Head.BodyChunks; cs != nil && (updated.Head.BodyChunks == nil || updated.Head.BodyChunks.ID != cs.ID) {
		c := bodyChunks(old, cs)
		body = &c
	}
	err := b.parallel(ctx, len(gone)+1, func(ctx context.Context, i int) error {
		if i == len(gone) {
			if body == nil {
				return nil
			}
			return b.deleteChunkSet(ctx, *body)
		}
		return b.cleanupPart(ctx, old.Namespace, gone[i].Kind, gone[i].Digest, old.UID)
	})
	if err != nil {
		return fmt.Errorf("release updated, but what it no longer references could not be cleaned up: %w", err)
	}
	return nil
}
