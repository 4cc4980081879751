package crsplit

import (
	"context"
	"errors"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/engine"
)

// errCrash, returned by a test hook, stops an operation with no cleanup.
var errCrash = errors.New("simulated crash")

// Create stores h in three steps, so that readers never see h before all
// of its parts and the cluster's garbage collector never sees a part
// without an owner:
//
//  1. create the Release, small and labelled pending: readers skip it, and
//     it takes the key (a second Create of the key fails here, with
//     ErrReleaseExists);
//  2. make each part h references stored and owned by that Release (its UID
//     exists now): new parts are created with the ownerReference, existing
//     ones gain it;
//  3. commit: add the labels and the release record and remove the pending
//     label, with the resourceVersion of step 1 as precondition.
//
// If step 2 or 3 fails the Release is deleted again and its parts cleaned
// up. A writer that dies between the steps leaves a pending Release that
// owns the parts it wrote; it is removed, with them, once older than
// PendingTimeout (by a later Create of the same key or any Delete in the
// namespace).
func (b *backend) Create(ctx context.Context, h *engine.Head, parts []*codec.Part) error {
	if err := checkCustomLabels(h.Labels); err != nil {
		return err
	}
	if missing := missingParts(h, parts); len(missing) > 0 {
		return fmt.Errorf("parts %v of the release were not given to the backend", missing)
	}
	body, err := splitBody(h)
	if err != nil {
		return err
	}
	obj := newReleaseObject(h, body, true)
	// Compress the parts likely to be written while the Release is being
	// created (Frame is computed once, on first use).
	go precompute(h, parts, b.known)
	created, err := b.createRelease(ctx, obj)
	if err != nil {
		return err
	}
	err = b.writeReferenced(ctx, h, parts, created, body)
	if err == nil && b.hooks.afterParts != nil {
		err = b.hooks.afterParts(h)
	}
	if err == nil {
		patch := commitPatch(h, body, created.ResourceVersion)
		var raw []byte
		raw, err = b.c.patch(ctx, resReleases, h.Namespace, created.Name, types.MergePatchType, patch)
		if isConflict(err) {
			err = fmt.Errorf("%w: the pending release was changed or replaced before it was committed", ErrConflict)
		}
		if err == nil {
			if committed, derr := decodeRelease(raw); derr == nil {
				b.seen.saw(committed)
			}
		}
	}
	if err != nil {
		if !errors.Is(err, errCrash) {
			b.rollback(created)
		}
		return err
	}
	return nil
}

// createRelease creates obj, taking over a stale pending Release of the
// same name.
func (b *backend) createRelease(ctx context.Context, obj *releaseObject) (*releaseObject, error) {
	for attempt := 0; ; attempt++ {
		raw, err := b.c.create(ctx, resReleases, obj.Namespace, obj.Name, obj)
		if err == nil {
			return decodeRelease(raw)
		}
		if !isAlreadyExists(err) {
			return nil, err
		}
		if attempt > 0 {
			return nil, driver.ErrReleaseExists
		}
		raw, gerr := b.c.get(ctx, resReleases, obj.Namespace, obj.Name)
		if gerr != nil {
			if objectMissing(gerr, resReleases, obj.Name) {
				continue // deleted meanwhile: try again
			}
			return nil, driver.ErrReleaseExists
		}
		old, derr := decodeRelease(raw)
		if derr != nil || !b.stale(old) {
			return nil, driver.ErrReleaseExists
		}
		b.log("helmstore crsplit: removing release %q in namespace %q left pending since %s by a writer that did not finish",
			old.Spec.Key, old.Namespace, old.CreationTimestamp.Time)
		if err := b.removeRelease(ctx, old); err != nil {
			return nil, err
		}
	}
}

// stale reports whether obj is a pending Release older than pendingTimeout.
func (b *backend) stale(obj *releaseObject) bool {
	return isPending(&obj.ObjectMeta) && b.now().Sub(obj.CreationTimestamp.Time) > b.pendingTimeout
}

// precompute computes the frames of the small parts of h the store has not
// seen, which ensurePart will create.
func precompute(h *engine.Head, parts []*codec.Part, known *knownParts) {
	for _, p := range h.Referenced(parts) {
		if p.Size <= createFirstBytes && !known.has(h.Namespace, p.Digest) {
			p.Frame()
		}
	}
}

// writeReferenced stores the parts of h that are in parts (all of them on
// Create, the new ones on Update) and h's chunked body, all owned by rel.
func (b *backend) writeReferenced(ctx context.Context, h *engine.Head, parts []*codec.Part, rel *releaseObject, body *releaseBody) error {
	owner := ownerRef("Release", &rel.ObjectMeta)
	ps := h.Referenced(parts)
	n := len(ps)
	if body.chunks != nil {
		n++
	}
	return parallel(ctx, n, func(ctx context.Context, i int) error {
		if i < len(ps) {
			if err := b.ensurePart(ctx, h.Namespace, ps[i], owner); err != nil {
				return fmt.Errorf("store %s part %s: %w", ps[i].Kind, ps[i].Digest.Short(), err)
			}
			return nil
		}
		return b.writeBody(ctx, rel, body)
	})
}

// missingParts lists the kinds h references whose part is not in parts.
func missingParts(h *engine.Head, parts []*codec.Part) []string {
	have := map[codec.Digest]bool{}
	for _, p := range parts {
		have[p.Digest] = true
	}
	var out []string
	for _, r := range h.Parts() {
		if !have[r.Digest] {
			out = append(out, r.Kind.String())
		}
	}
	return out
}

// writeBody stores a chunked release body, owned by its Release.
func (b *backend) writeBody(ctx context.Context, rel *releaseObject, body *releaseBody) error {
	cs := body.chunks
	chunks := codec.Chunks(body.frame, ChunkBytes)
	names := make([]string, len(chunks))
	for i := range names {
		names[i] = releaseChunkName(rel.UID, cs.ID, i)
	}
	return b.writeChunks(ctx, rel.Namespace, ownerRef("Release", &rel.ObjectMeta), "releases/"+rel.Name, names, chunks)
}

// rollback removes a Release whose Create failed, with what it wrote.
func (b *backend) rollback(rel *releaseObject) {
	ctx, cancel := cleanupContext()
	defer cancel()
	if err := b.removeRelease(ctx, rel); err != nil {
		b.log("helmstore crsplit: cleaning up after a failed create of %q in namespace %q: %v (the parts it wrote are owned by it and go with it)",
			rel.Spec.Key, rel.Namespace, err)
	}
}

// removeRelease deletes rel (if it is still the same object, unchanged)
// and cleans up its parts and chunks.
func (b *backend) removeRelease(ctx context.Context, rel *releaseObject) error {
	err := b.c.delete(ctx, resReleases, rel.Namespace, rel.Name, rel.UID, rel.ResourceVersion)
	if err != nil && !objectMissing(err, resReleases, rel.Name) {
		if isConflict(err) {
			return nil // replaced by another writer: not ours any more
		}
		return err
	}
	return b.cleanupRelease(ctx, rel)
}

// cleanupRelease drops a deleted Release's ownership of its parts (deleting
// those no live Release owns) and deletes its body chunks.
func (b *backend) cleanupRelease(ctx context.Context, rel *releaseObject) error {
	refs, err := refsOf(rel)
	if err != nil {
		return err
	}
	var names []string
	if cs := rel.Spec.ReleaseChunks; cs != nil {
		for i := 0; i < cs.Count; i++ {
			names = append(names, releaseChunkName(rel.UID, cs.ID, i))
		}
	}
	return parallel(ctx, len(refs)+1, func(ctx context.Context, i int) error {
		if i == len(refs) {
			return b.deleteChunks(ctx, rel.Namespace, names)
		}
		if err := b.cleanupPart(ctx, rel.Namespace, refs[i].Kind, refs[i].Digest, rel.UID); err != nil {
			return fmt.Errorf("clean up %s part %s: %w", refs[i].Kind, refs[i].Digest.Short(), err)
		}
		return nil
	})
}

// sweepPending removes the stale pending Releases of ns, with their parts.
func (b *backend) sweepPending(ctx context.Context, ns string) {
	raws, err := b.c.list(ctx, resReleases, ns, metav1.ListOptions{LabelSelector: labelPending})
	if err != nil {
		b.log("helmstore crsplit: looking for releases left pending in namespace %q: %v", ns, err)
		return
	}
	for _, raw := range raws {
		obj, err := decodeRelease(raw)
		if err != nil || !b.stale(obj) {
			continue
		}
		b.log("helmstore crsplit: removing release %q in namespace %q left pending since %s by a writer that did not finish",
			obj.Spec.Key, obj.Namespace, obj.CreationTimestamp.Time)
		if err := b.c.delete(ctx, resReleases, ns, obj.Name, obj.UID, obj.ResourceVersion); err != nil {
			continue // committed or changed meanwhile
		}
		if err := b.cleanupRelease(ctx, obj); err != nil {
			b.log("helmstore crsplit: cleaning up after release %q in namespace %q: %v", obj.Spec.Key, ns, err)
		}
	}
}
