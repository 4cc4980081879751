package crsplit

import (
	"context"
	"fmt"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/engine"
)

// Delete removes the Release stored under key, then its parts that no other
// live Release owns. The parts the caller lacks are read first. The Release
// is deleted with its UID and resourceVersion as preconditions: if it
// changed after being read, it is read again, so what Delete returns is
// what it deleted. Deleting the Release first means no reader ever sees it
// with parts missing; a crash before the parts are cleaned up leaves them
// owned only by a Release that no longer exists, which the cluster's
// garbage collector (or the next cleanup of the same part) removes.
func (b *backend) Delete(ctx context.Context, ns, key string, have func(codec.Digest) bool) (*engine.Head, map[codec.Digest][]byte, error) {
	var (
		obj    *releaseObject
		h      *engine.Head
		frames map[codec.Digest][]byte
	)
	if err := b.commits.wait(ctx, ns, key); err != nil {
		return nil, nil, err
	}
	for attempt := 0; ; attempt++ {
		var err error
		if obj, err = b.getCommitted(ctx, ns, key); err != nil {
			return nil, nil, err
		}
		if h, err = headOf(obj); err != nil {
			return nil, nil, err
		}
		if err := b.loadBody(ctx, obj, h); err != nil {
			return nil, nil, err
		}
		var want []engine.PartRef
		for _, r := range h.Parts() {
			if !have(r.Digest) {
				want = append(want, r)
			}
		}
		if frames, err = b.Parts(ctx, want); err != nil {
			return nil, nil, err
		}
		err = b.c.delete(ctx, resReleases, ns, obj.Name, obj.UID, obj.ResourceVersion)
		if err == nil {
			b.seen.forget(ns, key)
			break
		}
		if objectMissing(err, resReleases, obj.Name) {
			b.seen.forget(ns, key)
			return nil, nil, driver.ErrReleaseNotFound
		}
		if !isConflict(err) || attempt >= 5 {
			return nil, nil, err
		}
	}
	if err := b.cleanupRelease(ctx, obj); err != nil {
		return nil, nil, fmt.Errorf("release deleted, but its parts could not be cleaned up: %w", err)
	}
	b.sweepPending(ctx, ns)
	return h, frames, nil
}
