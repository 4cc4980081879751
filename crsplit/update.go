package crsplit

import (
	"context"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
)

// Update replaces the Release stored under h.Key with optimistic
// concurrency: it writes with the resourceVersion at which this store last
// read or wrote the Release (reading it first if it has not seen it),
// after storing the parts the release newly references (owned by it
// before it references them). If another writer changed the Release since,
// the write fails with ErrConflict and nothing is overwritten: Helm updates
// a release it has just read, so the check covers its whole
// read-modify-write. Parts the Release no longer references lose it as an
// owner afterwards, and are deleted when no other Release owns them.
//
// Within one store, as with Helm's Secrets driver, the last Update wins:
// the store's Updates of one release run one at a time, and a conflict
// with a version the store has itself seen by then (a read of another
// goroutine that finished during the write) or with the mere commit of
// the Release is not reported: the Update is written again over that
// version. Only a change the store has not seen is a conflict.
func (b *kubeBackend) Update(ctx context.Context, h *backend.Head, parts []*codec.Part) error {
	if err := checkCustomLabels(h.Labels); err != nil {
		return err
	}
	if missing := missingParts(h, parts); len(missing) > 0 {
		return fmt.Errorf("parts %v of the release were not given to the backend", missing)
	}
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
	body, err := splitBody(h)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		raw, err := b.put(ctx, h, parts, old, body)
		if errors.Is(err, ErrConflict) && attempt < updateRetries {
			// Written again over the current version if the only
			// change since old is its commit, or one this store has
			// seen meanwhile.
			cur, gerr := b.getCommitted(ctx, h.Namespace, h.Key)
			switch {
			case gerr != nil && !errors.Is(gerr, driver.ErrReleaseNotFound):
				return gerr
			case gerr == nil && cur.UID == old.UID && (b.seen.seenAt(cur) || isPending(&old.ObjectMeta) && onlyCommitted(old, cur)):
				old = cur
				continue
			}
		}
		switch {
		case objectMissing(err, resReleases, releaseObjectName(h.Key)):
			b.seen.forget(h.Namespace, h.Key, old.UID, old.ResourceVersion)
			return driver.ErrReleaseNotFound
		case errors.Is(err, ErrConflict):
			b.seen.forget(h.Namespace, h.Key, old.UID, old.ResourceVersion)
			return fmt.Errorf("%w (read at resourceVersion %s): %v", ErrConflict, old.ResourceVersion, err)
		case err != nil:
			return err
		}
		updated, err := decodeRelease(raw)
		if err != nil {
			return err
		}
		b.seen.saw(updated)
		return b.dropUnreferenced(ctx, old, updated)
	}
}

// updateRetries bounds how often one Update is written again over a
// version its store has seen (each time, another goroutine's read of the
// same release finished during the write).
const updateRetries = 10

// put writes h over the Release old, with old's UID and resourceVersion as
// preconditions, after storing the parts h references that old does not.
func (b *kubeBackend) put(ctx context.Context, h *backend.Head, parts []*codec.Part, old *releaseObject, body *releaseBody) ([]byte, error) {
	oldRefs, err := refsOf(old)
	if err != nil {
		return nil, err
	}
	h.CreatedAt = old.Spec.CreatedAt
	was := map[codec.Digest]bool{}
	for _, r := range oldRefs {
		was[r.Digest] = true
	}
	var added []*codec.Part
	for _, p := range h.Referenced(parts) {
		if !was[p.Digest] {
			added = append(added, p)
		}
	}
	if err := b.writeReferenced(ctx, h, added, old, body); err != nil {
		return nil, err
	}
	if b.hooks.beforePut != nil {
		if err := b.hooks.beforePut(h); err != nil {
			return nil, err
		}
	}
	obj := newReleaseObject(h, body)
	obj.UID, obj.ResourceVersion = old.UID, old.ResourceVersion
	return b.c.update(ctx, resReleases, h.Namespace, obj.Name, obj)
}

// onlyCommitted reports whether cur is old committed and otherwise
// unchanged: same object, same generation (which the API server raises
// with every change of the spec), same labels but the pending one.
func onlyCommitted(old, cur *releaseObject) bool {
	if cur.UID != old.UID || cur.Generation != old.Generation || isPending(&cur.ObjectMeta) || len(cur.Labels) != len(old.Labels)-1 {
		return false
	}
	for k, v := range cur.Labels {
		if old.Labels[k] != v {
			return false
		}
	}
	return true
}

// dropUnreferenced cleans up what old referenced and updated does not: its
// parts (the Release stops owning them) and an old chunked body.
func (b *kubeBackend) dropUnreferenced(ctx context.Context, old, updated *releaseObject) error {
	oldRefs, err := refsOf(old)
	if err != nil {
		return err
	}
	newRefs, err := refsOf(updated)
	if err != nil {
		return err
	}
	now := map[codec.Digest]bool{}
	for _, r := range newRefs {
		now[r.Digest] = true
	}
	var gone []backend.PartRef
	for _, r := range oldRefs {
		if !now[r.Digest] {
			gone = append(gone, r)
		}
	}
	var chunks []string
	if cs := old.Spec.ReleaseChunks; cs != nil && (updated.Spec.ReleaseChunks == nil || updated.Spec.ReleaseChunks.ID != cs.ID) {
		for i := 0; i < cs.Count; i++ {
			chunks = append(chunks, releaseChunkName(old.UID, cs.ID, i))
		}
	}
	err = parallel(ctx, len(gone)+1, func(ctx context.Context, i int) error {
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
