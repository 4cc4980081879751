package crsplit

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/engine"
)

// errCrash, returned by a test hook, stops an operation with no cleanup.
var errCrash = errors.New("simulated crash")

// Create stores h, as the engine's BeginCreate and finish do when h is
// already encoded.
func (b *backend) Create(ctx context.Context, h *engine.Head, parts []*codec.Part) error {
	return b.BeginCreate(ctx, h)(parts, nil)
}

// BeginCreate starts the Create of h while the engine encodes it, and
// returns the function that finishes it. A Create takes two round trips to
// the API server, the first one while the release is being encoded:
//
//  1. create the Release reserved (labelled helmstore.io/pending=true, with
//     only h's identity): readers skip it, and it takes the key (a second
//     Create of the key fails here, with ErrReleaseExists);
//  2. at once, with the UID the Release now has: store each part, owned by
//     the Release (new parts are created with the ownerReference, existing
//     ones gain it), and write the head into the Release (labels, part
//     digests, release record), still labelled pending, now =parts.
//
// A Release labelled pending=parts is visible to readers only when every
// part it references is stored, complete and owned by it, and its chunked
// record (if any) is all there; readers check (visible). Since ownership
// is only ever removed from a part when its owner is deleted, a release
// that is complete stays so, and a reader never sees a Release whose parts
// are missing. After Create returns, the Release is committed (the pending
// label removed, with the resourceVersion as precondition) in the
// background, so that readers need not check again; Update and Delete of
// the key in this store wait for that, and Close waits for all of them.
//
// If step 2 fails the Release is deleted again and its parts cleaned up.
// A writer that dies before step 2 is done leaves a pending Release that
// owns what it wrote; once older than PendingTimeout it is removed, with
// those parts, by a later Create of the same key or any Delete in the
// namespace (and the garbage collector follows it), or committed if it
// turns out complete. A Create that took longer than PendingTimeout/2
// commits before returning, so that it cannot lose to such a cleanup.
func (b *backend) BeginCreate(ctx context.Context, h *engine.Head) func([]*codec.Part, error) error {
	start := time.Now()
	if err := checkCustomLabels(h.Labels); err != nil {
		return func(_ []*codec.Part, encodeErr error) error {
			if encodeErr != nil {
				return encodeErr
			}
			return err
		}
	}
	type reserved struct {
		obj *releaseObject
		err error
	}
	ch := make(chan reserved, 1)
	go func() {
		obj, err := b.createRelease(ctx, reservedObject(h))
		ch <- reserved{obj, err}
	}()
	// Let the request go out before the engine takes the CPU to encode.
	runtime.Gosched()
	return func(parts []*codec.Part, encodeErr error) error {
		var body *releaseBody
		if encodeErr == nil {
			// Compress the small new parts and prepare the head while
			// the reservation is on its way (Frame is computed once, on
			// first use).
			go precompute(h, parts, b.known)
			if missing := missingParts(h, parts); len(missing) > 0 {
				encodeErr = fmt.Errorf("parts %v of the release were not given to the backend", missing)
			} else {
				body, encodeErr = splitBody(h)
			}
		}
		r := <-ch
		switch {
		case r.err != nil && encodeErr != nil:
			return encodeErr
		case r.err != nil:
			return r.err
		case encodeErr != nil:
			b.rollback(r.obj)
			return encodeErr
		}
		return b.finishCreate(ctx, h, parts, body, r.obj, start)
	}
}

// finishCreate is step 2 of a Create: parts and head, written at once into
// the reserved Release rel; then the commit.
func (b *backend) finishCreate(ctx context.Context, h *engine.Head, parts []*codec.Part, body *releaseBody, rel *releaseObject, start time.Time) error {
	cur := rel // the latest version of the Release this writer knows
	err := func() error {
		writeHead := func(ctx context.Context) error {
			if b.hooks.beforeHead != nil {
				if err := b.hooks.beforeHead(h); err != nil {
					return err
				}
			}
			raw, err := b.c.patch(ctx, resReleases, h.Namespace, rel.Name, types.MergePatchType, headPatch(h, body, rel.ResourceVersion))
			if isConflict(err) {
				return fmt.Errorf("%w: the pending release was changed or replaced before its head was written", ErrConflict)
			}
			if err != nil {
				return err
			}
			obj, err := decodeRelease(raw)
			if err == nil {
				cur = obj
			}
			return err
		}
		if body.chunks != nil {
			// A chunked record: the head (which names the chunks) first,
			// so that a crash leaves chunks a cleanup can find.
			if err := writeHead(ctx); err != nil {
				return err
			}
			return b.writeReferenced(ctx, h, parts, rel, body)
		}
		return parallel(ctx, 2, func(ctx context.Context, i int) error {
			if i == 0 {
				return writeHead(ctx)
			}
			return b.writeReferenced(ctx, h, parts, rel, body)
		})
	}()
	if err == nil && b.hooks.beforeCommit != nil {
		err = b.hooks.beforeCommit(h)
	}
	if err != nil {
		if !errors.Is(err, errCrash) {
			b.rollback(cur)
		}
		return err
	}
	b.seen.saw(cur)
	if time.Since(start) < b.pendingTimeout/2 {
		b.commitLater(cur)
		return nil
	}
	return b.commitNow(ctx, cur)
}

// commit removes the pending label from obj, if it is still at obj's
// resourceVersion.
func (b *backend) commit(ctx context.Context, obj *releaseObject) error {
	patch := map[string]any{"metadata": map[string]any{"resourceVersion": obj.ResourceVersion, "labels": map[string]any{labelPending: nil}}}
	raw, err := b.c.patch(ctx, resReleases, obj.Namespace, obj.Name, types.MergePatchType, patch)
	if err != nil {
		return err
	}
	committed, err := decodeRelease(raw)
	if err == nil {
		b.seen.saw(committed)
	}
	return err
}

// commitLater commits obj in the background. Losing to another write is
// fine: an Update commits too, and a Delete needs no commit.
func (b *backend) commitLater(obj *releaseObject) {
	done := b.commits.start(obj.Namespace, obj.Spec.Key)
	go func() {
		defer done()
		ctx, cancel := cleanupContext()
		defer cancel()
		err := b.commit(ctx, obj)
		if err != nil && !isConflict(err) && !objectMissing(err, resReleases, obj.Name) {
			b.log("helmstore crsplit: committing release %q in namespace %q (it is stored and readable; readers check its parts until it is committed): %v",
				obj.Spec.Key, obj.Namespace, err)
		}
	}()
}

// commitNow commits obj before Create returns, for a Create so slow that a
// cleanup of stale pending Releases could have removed it: then the
// Create fails.
func (b *backend) commitNow(ctx context.Context, obj *releaseObject) error {
	err := b.commit(ctx, obj)
	if err == nil || !isConflict(err) {
		return err
	}
	cur, gerr := b.getCommitted(ctx, obj.Namespace, obj.Spec.Key)
	if gerr == nil && cur.UID == obj.UID {
		return nil // committed, or updated, by someone else
	}
	return fmt.Errorf("%w: the release was removed before it was committed (the create took longer than %s)", ErrConflict, b.pendingTimeout/2)
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
		if b.completeStale(ctx, old) {
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

// completeStale commits a stale pending Release that is complete (its
// writer died after step 2, before the commit) and reports whether it was.
func (b *backend) completeStale(ctx context.Context, obj *releaseObject) bool {
	ok, err := b.visible(ctx, obj)
	if err != nil || !ok {
		return false
	}
	if err := b.commit(ctx, obj); err != nil && !isConflict(err) {
		b.log("helmstore crsplit: committing release %q in namespace %q left uncommitted by its writer: %v", obj.Spec.Key, obj.Namespace, err)
	}
	return true
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
			if b.hooks.beforePart != nil {
				if err := b.hooks.beforePart(ps[i]); err != nil {
					return err
				}
			}
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
	if isPending(&rel.ObjectMeta) {
		// A Create that stopped before its head was written: the
		// parts it stored are not named in the Release, only owned.
		owned, err := b.ownedParts(ctx, rel)
		if err != nil {
			return err
		}
		refs = mergeRefs(refs, owned)
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

// ownedParts lists the parts in rel's namespace that rel owns.
func (b *backend) ownedParts(ctx context.Context, rel *releaseObject) ([]engine.PartRef, error) {
	var out []engine.PartRef
	for _, k := range codec.Kinds {
		ms, err := b.c.listMeta(ctx, partResource(k), rel.Namespace)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if !ownedBy(&m.ObjectMeta, rel.UID) {
				continue
			}
			d, err := codec.ParseDigest(m.Name)
			if err != nil {
				continue // not a part name: not ours
			}
			out = append(out, engine.PartRef{Namespace: rel.Namespace, Digest: d, Kind: k})
		}
	}
	return out, nil
}

// mergeRefs returns a with the references of b it lacks.
func mergeRefs(a, b []engine.PartRef) []engine.PartRef {
	have := map[codec.Digest]bool{}
	for _, r := range a {
		have[r.Digest] = true
	}
	for _, r := range b {
		if !have[r.Digest] {
			a = append(a, r)
			have[r.Digest] = true
		}
	}
	return a
}

func ownedBy(m *metav1.ObjectMeta, uid types.UID) bool {
	for _, o := range m.OwnerReferences {
		if o.UID == uid {
			return true
		}
	}
	return false
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
		if err != nil || !b.stale(obj) || b.completeStale(ctx, obj) {
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
