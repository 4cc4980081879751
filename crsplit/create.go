package crsplit

import (
	"context"
	"errors"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
)

// errCrash, returned by a test hook, stops an operation with no cleanup.
var errCrash = errors.New("simulated crash")

// Create stores h in two round trips to the API server:
//
//  1. create the Release with the whole head (labels, part digests, release
//     record), labelled helmstore.io/pending=parts: it takes the key (a
//     second Create of the key fails here, with ErrReleaseExists);
//  2. at once, with the UID the Release now has, store each part owned by
//     it (new parts are created with the ownerReference, existing ones gain
//     it) and its chunked record, if any.
//
// A Release labelled pending=parts is visible to readers only when every
// part it references is stored, complete and owned by it, and its chunked
// record is all there: readers check (visible). Ownership is removed from a
// part only when its owner is deleted, so a Release that is complete stays
// so; the last write of step 2 is the one moment the release appears, and
// a reader never sees a Release whose parts are missing. After Create
// returns, the Release is committed (the pending label removed, with its
// resourceVersion as precondition) in the background, so that readers need
// not check any more; Update and Delete of the release in this store wait
// for that, and Close waits for all of them.
//
// If step 2 fails the Release is hidden (so that a write whose answer was
// lost cannot leave it visible) and deleted again with its parts.
// A writer that dies during step 2 leaves a pending Release that owns what
// it wrote; once older than PendingTimeout it is removed, with those parts,
// by a later Create of the same key or any Delete in the namespace (and the
// garbage collector follows it), or committed if it turns out complete. A
// Create that took longer than PendingTimeout/10 commits before returning,
// so that it cannot lose to such a cleanup.
func (b *kubeBackend) Create(ctx context.Context, h *backend.Head, parts []*codec.Part) error {
	start := time.Now()
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
	obj := newReleaseObject(h, body)
	obj.Labels[labelPending] = pendingParts
	// Compress the parts likely to be written while the Release is being
	// created (Frame is computed once, on first use).
	go precompute(h, parts, b.known)
	created, err := b.createRelease(ctx, obj)
	if err != nil {
		return err
	}
	if created.Spec.Parts != obj.Spec.Parts {
		// The API server pruned a field it does not know: the cluster's
		// CRDs are older than this version (delta bases are new).
		return b.abandon(created, fmt.Errorf("%w: the Release CRD in the cluster does not keep spec.parts as written (older than this version of helmstore?): install this version's CRDs (InstallCRDs, CRDManifests)", ErrCRDsNotInstalled))
	}
	err = b.writeReferenced(ctx, h, parts, created, body)
	if err == nil && b.hooks.beforeCommit != nil {
		err = b.hooks.beforeCommit(h)
	}
	if err != nil {
		if errors.Is(err, errCrash) {
			return err
		}
		return b.abandon(created, err)
	}
	b.seen.saw(created)
	if time.Since(start) < b.pendingTimeout/fastCommitFraction {
		b.commitLater(created)
		return nil
	}
	return b.commitNow(ctx, created)
}

// fastCommitFraction: a Create that took less than PendingTimeout divided by
// this commits in the background. A slower one commits before returning,
// and fails if its Release was taken for stale and removed meanwhile (which
// takes a cleanup whose clock runs ahead of the API server's by the rest of
// PendingTimeout).
const fastCommitFraction = 10

// abandon undoes a Create whose parts could not all be stored (failed). A
// write whose answer was lost may have landed, making the release visible
// for a moment, so the Release is first hidden, as one written by earlier
// versions before its head (pending=true, never shown; resourceVersion as
// precondition), then deleted with its parts. If hiding loses to another
// writer, that writer saw the release whole and updated it: the Create did
// happen, and is kept.
func (b *kubeBackend) abandon(rel *releaseObject, failed error) error {
	ctx, cancel := cleanupContext()
	defer cancel()
	hidden, err := b.relabel(ctx, rel, map[string]string{labelPending: pendingOld, backend.LabelOwner: rel.Spec.Owner})
	if isConflict(err) {
		if cur, gerr := b.getCommitted(ctx, rel.Namespace, rel.Spec.Key); gerr == nil && cur.UID == rel.UID {
			b.log("helmstore crsplit: release %q in namespace %q was stored and updated by another client although this create reported: %v",
				rel.Spec.Key, rel.Namespace, failed)
			return nil
		}
	}
	if err == nil {
		rel = hidden
	}
	b.rollback(rel)
	return failed
}

// commit removes the pending label from obj, if it is still at obj's
// resourceVersion (an update: the store needs no patch rights on Releases).
func (b *kubeBackend) commit(ctx context.Context, obj *releaseObject) error {
	labels := make(map[string]string, len(obj.Labels))
	for k, v := range obj.Labels {
		if k != labelPending {
			labels[k] = v
		}
	}
	committed, err := b.relabel(ctx, obj, labels)
	if err == nil {
		b.seen.saw(committed)
	}
	return err
}

// relabel writes obj back with labels instead of its own, if it is still
// at obj's resourceVersion, and returns it as written.
func (b *kubeBackend) relabel(ctx context.Context, obj *releaseObject, labels map[string]string) (*releaseObject, error) {
	c := *obj
	c.Labels, c.ManagedFields = labels, nil
	raw, err := b.c.update(ctx, resReleases, c.Namespace, c.Name, &c)
	if err != nil {
		return nil, err
	}
	return decodeRelease(raw)
}

// commitLater commits obj in the background. Losing to another write is
// fine: an Update commits too, and a Delete needs no commit.
func (b *kubeBackend) commitLater(obj *releaseObject) {
	done := b.commits.start(obj.Namespace, obj.Spec.Key)
	go func() {
		defer done()
		ctx, cancel := cleanupContext()
		defer cancel()
		err := b.commit(ctx, obj)
		if isConflict(err) || objectMissing(err, resReleases, obj.Name) {
			// Fine if another client updated or deleted the release
			// since; not if it is gone or replaced without either.
			if cur, gerr := b.getRelease(ctx, obj.Namespace, obj.Name); gerr == nil && cur != nil && cur.UID == obj.UID {
				return // updated since, which committed it
			}
			err = fmt.Errorf("the release is gone (%v): deleted by another client, or removed as stale by a cleanup whose clock runs ahead of the API server's", err)
		}
		if err != nil {
			b.log("helmstore crsplit: committing release %q in namespace %q (it is stored and readable; readers check its parts until it is committed): %v",
				obj.Spec.Key, obj.Namespace, err)
		}
	}()
}

// commitNow commits obj before Create returns, for a Create so slow that a
// cleanup of stale pending Releases could have removed it: then the
// Create fails.
func (b *kubeBackend) commitNow(ctx context.Context, obj *releaseObject) error {
	err := b.commit(ctx, obj)
	if err == nil || !isConflict(err) {
		return err
	}
	cur, gerr := b.getCommitted(ctx, obj.Namespace, obj.Spec.Key)
	if gerr != nil && !errors.Is(gerr, driver.ErrReleaseNotFound) {
		return gerr
	}
	if gerr == nil && cur.UID == obj.UID {
		return nil // committed, or updated, by someone else
	}
	return fmt.Errorf("%w: the release was removed before it was committed (the create took longer than %s)", ErrConflict, b.pendingTimeout/fastCommitFraction)
}

// createRelease creates obj, taking over a stale pending Release of the
// same name.
func (b *kubeBackend) createRelease(ctx context.Context, obj *releaseObject) (*releaseObject, error) {
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
		old, gerr := b.getRelease(ctx, obj.Namespace, obj.Name)
		switch {
		case gerr == nil && old == nil:
			continue // deleted meanwhile: try again
		case gerr != nil || !b.stale(old):
			return nil, driver.ErrReleaseExists
		}
		if kept, err := b.collectStale(ctx, old); err != nil {
			return nil, err
		} else if kept {
			return nil, driver.ErrReleaseExists
		}
	}
}

// stale reports whether obj is a pending Release older than pendingTimeout.
func (b *kubeBackend) stale(obj *releaseObject) bool {
	return isPending(&obj.ObjectMeta) && b.now().Sub(obj.CreationTimestamp.Time) > b.pendingTimeout
}

// collectStale handles a stale pending Release: one that is complete (its
// writer stopped after step 2, before the commit) is committed and kept;
// one that is not is removed with its parts. One that cannot be checked (an
// error) is kept.
func (b *kubeBackend) collectStale(ctx context.Context, obj *releaseObject) (kept bool, err error) {
	complete, err := b.visible(ctx, obj, nil)
	if err != nil {
		return true, err
	}
	if complete {
		if err := b.commit(ctx, obj); err != nil && !isConflict(err) {
			b.log("helmstore crsplit: committing release %q in namespace %q left uncommitted by its writer: %v", obj.Spec.Key, obj.Namespace, err)
		}
		return true, nil
	}
	b.log("helmstore crsplit: removing release %q in namespace %q left pending since %s by a writer that did not finish",
		obj.Spec.Key, obj.Namespace, obj.CreationTimestamp.Time)
	return false, b.removeRelease(ctx, obj)
}

// precompute computes the frames of the small parts of h the store has not
// seen, which ensurePart will create.
func precompute(h *backend.Head, parts []*codec.Part, known *knownParts) {
	for _, p := range h.Referenced(parts) {
		if p.Size <= createFirstBytes && !known.has(h.Namespace, p.Digest) {
			p.Frame()
		}
	}
}

// writeReferenced stores the parts of h that are in parts (all of them on
// Create, the new ones on Update) and h's chunked body, all owned by rel.
func (b *kubeBackend) writeReferenced(ctx context.Context, h *backend.Head, parts []*codec.Part, rel *releaseObject, body *releaseBody) error {
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
func missingParts(h *backend.Head, parts []*codec.Part) []string {
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
func (b *kubeBackend) writeBody(ctx context.Context, rel *releaseObject, body *releaseBody) error {
	cs := body.chunks
	chunks := codec.Chunks(body.frame, ChunkBytes)
	names := make([]string, len(chunks))
	for i := range names {
		names[i] = releaseChunkName(rel.UID, cs.ID, i)
	}
	return b.writeChunks(ctx, rel.Namespace, ownerRef("Release", &rel.ObjectMeta), "releases/"+rel.Name, names, chunks)
}

// rollback removes a Release whose Create failed, with what it wrote.
func (b *kubeBackend) rollback(rel *releaseObject) {
	ctx, cancel := cleanupContext()
	defer cancel()
	if err := b.removeRelease(ctx, rel); err != nil {
		b.log("helmstore crsplit: cleaning up after a failed create of %q in namespace %q: %v (the parts it wrote are owned by it and go with it)",
			rel.Spec.Key, rel.Namespace, err)
	}
}

// removeRelease deletes rel (if it is still the same object, unchanged)
// and cleans up its parts and chunks.
func (b *kubeBackend) removeRelease(ctx context.Context, rel *releaseObject) error {
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
// Of a damaged Release, only the parts whose digests parse, and its
// chunks if their count is believable (the garbage collector takes the
// rest).
func (b *kubeBackend) cleanupRelease(ctx context.Context, rel *releaseObject) error {
	refs := someRefsOf(rel)
	var names []string
	if cs := rel.Spec.ReleaseChunks; cs != nil && cs.Count <= maxReleaseChunks {
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

// maxReleaseChunks bounds the chunks of a release record (MaxHeadBytes,
// compressed, is far less).
const maxReleaseChunks = 1 + codec.MaxHeadBytes/ChunkBytes

// sweepPending removes the stale pending Releases of ns, with their parts.
func (b *kubeBackend) sweepPending(ctx context.Context, ns string) {
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
		if _, err := b.collectStale(ctx, obj); err != nil {
			b.log("helmstore crsplit: cleaning up after release %q in namespace %q: %v", obj.Spec.Key, ns, err)
		}
	}
}
