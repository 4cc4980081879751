package crsplit

import (
	"context"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
)

// Delete removes the Release stored under key, then its parts that no other
// live Release owns. The parts the caller lacks are read first. The Release
// is deleted with its UID and resourceVersion as preconditions: if it
// changed after being read, it is read again, so what Delete returns is
// what it deleted. Deleting the Release first means no reader ever sees it
// with parts missing; a crash before the parts are cleaned up leaves them
// owned only by a Release that no longer exists, which the cluster's
// garbage collector (or the next cleanup of the same part) removes.
//
// Once the Release is deleted, Delete succeeds: a cleanup that fails (a
// part shared with releases being created and deleted all the time can
// keep changing under it) is logged, and left to the garbage collector and
// to later cleanups of the same parts, which skip owners that are gone.
// Only a cleanup the store is not allowed to do (missing RBAC rights),
// which would fail the same way on every Delete, is reported.
//
// A Release whose head cannot be read (damaged by hand, a bad restore) is
// deleted too, returned as a head with only Namespace, Key and Err; the
// parts and chunks it names are cleaned up as far as they can be made out.
func (b *kubeBackend) Delete(ctx context.Context, ns, key string, have func(codec.Digest) bool) (*backend.Head, map[codec.Digest][]byte, error) {
	var (
		obj    *releaseObject
		h      *backend.Head
		frames map[codec.Digest][]byte
		bo     backoff
	)
	if err := b.commits.wait(ctx, ns, key); err != nil {
		return nil, nil, err
	}
	for attempt := 0; ; attempt++ {
		var err error
		if obj, h, frames, err = b.readForDelete(ctx, ns, key, have); err != nil {
			return nil, nil, err
		}
		err = b.c.delete(ctx, resReleases, ns, obj.Name, obj.UID, obj.ResourceVersion)
		if err == nil {
			break
		}
		if objectMissing(err, resReleases, obj.Name) {
			b.seen.forget(ns, key, obj.UID, obj.ResourceVersion)
			return nil, nil, driver.ErrReleaseNotFound
		}
		if isConflict(err) && attempt < 10 {
			if err := bo.wait(ctx); err != nil {
				return nil, nil, err
			}
			continue
		}
		if _, ok := apiStatus(err); !ok && b.deletedAnyway(ns, obj) {
			// The answer was lost, not the delete.
			break
		}
		return nil, nil, err
	}
	b.seen.forget(ns, key, obj.UID, obj.ResourceVersion)
	cctx, cancel := cleanupContext()
	defer cancel()
	cleanup := b.cleanupRelease
	if h.Verify() != nil {
		cleanup = b.cleanupOwned
	}
	if err := cleanup(cctx, obj); errors.Is(err, ErrForbidden) || errors.Is(err, ErrCRDsNotInstalled) {
		// Not a race that the garbage collector or the next cleanup
		// settles: the store's rights (or the cluster) are wrong, and
		// every Delete will leave its parts behind until fixed.
		return nil, nil, fmt.Errorf("release deleted, but its parts could not be cleaned up: %w", err)
	} else if err != nil {
		b.log("helmstore crsplit: release %q in namespace %q deleted, but what it owned is not all cleaned up (the garbage collector, or the next cleanup of the same parts, removes it): %v",
			key, ns, err)
	}
	b.sweepPending(cctx, ns)
	return h, frames, nil
}

// deletedAnyway reports, after a delete of obj failed without an answer
// from the API server, whether obj is gone all the same.
func (b *kubeBackend) deletedAnyway(ns string, obj *releaseObject) bool {
	ctx, cancel := cleanupContext()
	defer cancel()
	m, err := b.c.getMeta(ctx, resReleases, ns, obj.Name)
	return objectMissing(err, resReleases, obj.Name) || err == nil && m.UID != obj.UID
}

// readForDelete reads the Release to delete, its head and the frames of the
// parts the caller lacks. A Release that cannot be read is returned as
// far as it decodes, with a head that has Err set.
func (b *kubeBackend) readForDelete(ctx context.Context, ns, key string, have func(codec.Digest) bool) (*releaseObject, *backend.Head, map[codec.Digest][]byte, error) {
	obj, err := b.getCommitted(ctx, ns, key)
	var h *backend.Head
	if err == nil {
		h, err = headOf(obj)
	}
	if err == nil {
		err = b.loadBody(ctx, obj, h)
	}
	if errors.Is(err, codec.ErrCorrupt) {
		raw, gerr := b.c.get(ctx, resReleases, ns, releaseObjectName(key))
		if objectMissing(gerr, resReleases, releaseObjectName(key)) {
			return nil, nil, nil, driver.ErrReleaseNotFound
		}
		if gerr != nil {
			return nil, nil, nil, gerr
		}
		obj = decodeDamaged(raw)
		return obj, damagedHead(obj, key, err), nil, nil
	}
	if err != nil {
		return nil, nil, nil, err
	}
	var want []backend.PartRef
	for _, r := range h.Parts() {
		if !have(r.Digest) {
			want = append(want, r)
		}
	}
	frames, err := b.Parts(ctx, want)
	if err != nil {
		return nil, nil, nil, err
	}
	return obj, h, frames, nil
}

// damagedHead is the head reported for the Release obj stored under key,
// which cannot be read because of cause: Namespace and Key, Err, and what
// the key and the labels tell (name, version, status, owner) for queries.
func damagedHead(obj *releaseObject, key string, cause error) *backend.Head {
	if !errors.Is(cause, codec.ErrCorrupt) {
		cause = fmt.Errorf("%w: %v", codec.ErrCorrupt, cause)
	}
	h := &backend.Head{Namespace: obj.Namespace, Key: key, Labels: map[string]string{},
		Err: fmt.Errorf("release %q in namespace %q: its Release object %s cannot be read: %w", key, obj.Namespace, obj.Name, cause)}
	if name, version, err := backend.ParseKey(key); err == nil {
		h.Name, h.Version = name, version
	}
	h.Status, h.Owner = obj.Labels[backend.LabelStatus], obj.Labels[backend.LabelOwner]
	return h
}

// cleanupOwned is cleanupRelease for a Release whose digests cannot be
// trusted: every part and chunk of the namespace it owns is found by its
// ownerReferences (a list of metadata), and cleaned up as cleanupRelease
// would. The parts its digests name that it does not own are left alone
// (they may be another release's).
func (b *kubeBackend) cleanupOwned(ctx context.Context, rel *releaseObject) error {
	type owned struct {
		res  string
		kind codec.Kind
		name string
	}
	var parts []owned
	var chunks []string
	for _, r := range []struct {
		res  string
		kind codec.Kind
	}{{resCharts, codec.KindChart}, {resValues, codec.KindValues}, {resManifests, codec.KindManifest}, {resChunks, 0}} {
		ms, err := b.c.listMeta(ctx, r.res, rel.Namespace)
		if err != nil {
			return err
		}
		for i := range ms {
			if !ownedBy(&ms[i].ObjectMeta, rel.UID) {
				continue
			}
			if r.res == resChunks {
				chunks = append(chunks, ms[i].Name)
			} else {
				parts = append(parts, owned{r.res, r.kind, ms[i].Name})
			}
		}
	}
	return parallel(ctx, len(parts)+1, func(ctx context.Context, i int) error {
		if i == len(parts) {
			return b.deleteChunks(ctx, rel.Namespace, chunks)
		}
		d, err := codec.ParseDigest(parts[i].name)
		if err != nil {
			return nil // not a part crsplit wrote
		}
		return b.cleanupPart(ctx, rel.Namespace, parts[i].kind, d, rel.UID)
	})
}
