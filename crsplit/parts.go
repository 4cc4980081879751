package crsplit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
)

func decodePart(raw []byte) (*partObject, error) {
	var obj partObject
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%w: part object: %v", codec.ErrCorrupt, err)
	}
	return &obj, nil
}

// Parts reads the referenced parts, in parallel. A part that is absent,
// not yet complete or missing a chunk is left out of the result. A part
// whose objects are damaged (a part object or chunk that does not decode,
// a renumbered chunk) is returned as an empty frame, which the engine
// reports as corrupt for the releases that use it, and for them only.
func (b *kubeBackend) Parts(ctx context.Context, refs []backend.PartRef) (map[codec.Digest][]byte, error) {
	out := make(map[codec.Digest][]byte, len(refs))
	var mu sync.Mutex
	err := parallel(ctx, len(refs), func(ctx context.Context, i int) error {
		frame, err := b.readPart(ctx, refs[i])
		if errors.Is(err, codec.ErrCorrupt) {
			b.log("helmstore crsplit: %s part %s in namespace %q is damaged: %v", refs[i].Kind, refs[i].Digest.Short(), refs[i].Namespace, err)
			frame, err = []byte{}, nil
		}
		if err != nil || frame == nil {
			return err
		}
		mu.Lock()
		out[refs[i].Digest] = frame
		mu.Unlock()
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// readPart returns the frame of one part, or nil if it is not stored.
//
// A part's bytes never change once complete, and the engine checks them
// against the digest, so the part and its chunks are first read from the
// API server's watch cache, which spares etcd reads and the decoding of
// large objects. If the cache does not (yet) hold the part complete with
// all its chunks, the part is read again from etcd before it counts as
// missing.
func (b *kubeBackend) readPart(ctx context.Context, ref backend.PartRef) ([]byte, error) {
	frame, err := b.readPartFrom(ctx, ref, true)
	if frame != nil || err != nil {
		return frame, err
	}
	return b.readPartFrom(ctx, ref, false)
}

// readPartFrom reads one part from the watch cache (cached) or etcd; nil
// if it is absent, incomplete or missing a chunk there.
func (b *kubeBackend) readPartFrom(ctx context.Context, ref backend.PartRef, cached bool) ([]byte, error) {
	res, name := partResource(ref.Kind), ref.Digest.String()
	raw, err := b.c.read(ctx, res, ref.Namespace, name, cached)
	if objectMissing(err, res, name) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	obj, err := decodePart(raw)
	if err != nil {
		return nil, err
	}
	if !obj.Spec.Complete {
		return nil, nil
	}
	b.known.add(ref.Namespace, ref.Digest)
	if obj.Spec.Chunks == 0 {
		return obj.Spec.Data, nil
	}
	names := make([]string, obj.Spec.Chunks)
	for i := range names {
		names[i] = partChunkName(obj.UID, i)
	}
	return b.readChunks(ctx, ref.Namespace, names, cached)
}

// readChunks reads and joins the named chunks, from the watch cache when
// cached; nil if any is missing.
func (b *kubeBackend) readChunks(ctx context.Context, ns string, names []string, cached bool) ([]byte, error) {
	chunks := make([][]byte, len(names))
	missing := false
	var mu sync.Mutex
	err := parallel(ctx, len(names), func(ctx context.Context, i int) error {
		raw, err := b.c.read(ctx, resChunks, ns, names[i], cached)
		if objectMissing(err, resChunks, names[i]) {
			mu.Lock()
			missing = true
			mu.Unlock()
			return nil
		}
		if err != nil {
			return err
		}
		var c chunkObject
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("chunk %s: %w: %v", names[i], codec.ErrCorrupt, err)
		}
		if c.Spec.Index != i {
			return fmt.Errorf("chunk %s: %w: holds index %d", names[i], codec.ErrCorrupt, c.Spec.Index)
		}
		chunks[i] = c.Spec.Data
		return nil
	})
	if err != nil || missing {
		return nil, err
	}
	return codec.Join(chunks), nil
}

// writeChunks creates the chunks of a frame, owned by owner. A chunk that
// already exists was written by another writer of the same frame (same
// owner UID, same bytes) and is kept.
func (b *kubeBackend) writeChunks(ctx context.Context, ns string, owner metav1.OwnerReference, of string, names []string, chunks [][]byte) error {
	return parallel(ctx, len(chunks), func(ctx context.Context, i int) error {
		obj := &chunkObject{
			TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: "Chunk"},
			ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: ns, OwnerReferences: []metav1.OwnerReference{owner}},
			Spec:       chunkSpec{Of: of, Index: i, Data: chunks[i]},
		}
		err := b.c.createQuiet(ctx, resChunks, ns, names[i], obj)
		if isAlreadyExists(err) {
			return nil
		}
		return err
	})
}

// deleteChunks removes the named chunks; absent ones are fine.
func (b *kubeBackend) deleteChunks(ctx context.Context, ns string, names []string) error {
	return parallel(ctx, len(names), func(ctx context.Context, i int) error {
		err := b.c.delete(ctx, resChunks, ns, names[i], "", "")
		if objectMissing(err, resChunks, names[i]) {
			return nil
		}
		return err
	})
}

func partChunkNames(obj *partObject) []string {
	names := make([]string, obj.Spec.Chunks)
	for i := range names {
		names[i] = partChunkName(obj.UID, i)
	}
	return names
}

// ensurePart makes p stored in ns, complete, and owned by owner (among its
// other owners). It never rewrites the bytes of a part that is stored: an
// existing part only gains an ownerReference, added by a JSON patch the API
// server applies atomically to the latest version, so it cannot be lost to
// a concurrent owner change. A concurrent cleanupPart that read the part
// before the patch then fails its resourceVersion precondition and looks
// again; one that deleted it first makes the patch fail with not-found, and
// the part is created anew.
//
// Which request goes first is a guess, only for speed: a part this store
// has seen stored, or a large one (whose frame is costly to compute), is
// patched first; a small one never seen (new values, a new manifest) is
// created first.
func (b *kubeBackend) ensurePart(ctx context.Context, ns string, p *codec.Part, owner metav1.OwnerReference) error {
	res, name := partResource(p.Kind), p.Digest.String()
	create := !b.known.has(ns, p.Digest) && p.Size <= createFirstBytes
	var bo backoff
	for attempt := 0; attempt < 20; attempt++ {
		if attempt > 1 {
			// Deleted by a cleanup after each create attempt lost to
			// a part that was still there: space the attempts.
			if err := bo.wait(ctx); err != nil {
				return err
			}
		}
		if create {
			err := b.createPart(ctx, ns, p, owner)
			if !isAlreadyExists(err) {
				if err == nil {
					b.known.add(ns, p.Digest)
				}
				return err
			}
		}
		create = true
		obj, err := b.addOwner(ctx, res, ns, name, owner)
		switch {
		case err == nil:
			b.known.add(ns, p.Digest)
			if obj.Spec.Complete {
				return nil
			}
			return b.completePart(ctx, ns, p, obj)
		case !objectMissing(err, res, name):
			return err
		}
	}
	return fmt.Errorf("%s part %s: %w: it kept appearing and disappearing", p.Kind, p.Digest.Short(), ErrConflict)
}

// addOwner appends owner to the part's ownerReferences (the API server
// drops a duplicate UID) and returns the part as updated.
func (b *kubeBackend) addOwner(ctx context.Context, res, ns, name string, owner metav1.OwnerReference) (*partObject, error) {
	patch := []map[string]any{{"op": "add", "path": "/metadata/ownerReferences/-", "value": owner}}
	raw, err := b.c.patch(ctx, res, ns, name, types.JSONPatchType, patch)
	if err != nil {
		if st, ok := apiStatus(err); ok && st.Code >= 400 && st.Code < 500 && !objectMissing(err, res, name) && !isConflict(err) && st.Code != 403 {
			// The part has no ownerReferences list to append to (it
			// is never left so, but be safe): set the list instead.
			return b.addOwnerCAS(ctx, res, ns, name, owner)
		}
		return nil, err
	}
	return decodePart(raw)
}

// addOwnerCAS adds owner with a read and a resourceVersion-checked write.
func (b *kubeBackend) addOwnerCAS(ctx context.Context, res, ns, name string, owner metav1.OwnerReference) (*partObject, error) {
	for attempt := 0; attempt < 10; attempt++ {
		raw, err := b.c.get(ctx, res, ns, name)
		if err != nil {
			return nil, err
		}
		obj, err := decodePart(raw)
		if err != nil {
			return nil, err
		}
		if ownedBy(&obj.ObjectMeta, owner.UID) {
			return obj, nil
		}
		owners := append(append([]metav1.OwnerReference{}, obj.OwnerReferences...), owner)
		patch := map[string]any{"metadata": map[string]any{"resourceVersion": obj.ResourceVersion, "ownerReferences": owners}}
		raw, err = b.c.patch(ctx, res, ns, name, types.MergePatchType, patch)
		if isConflict(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return decodePart(raw)
	}
	return nil, fmt.Errorf("%s %s: %w", res, name, ErrConflict)
}

// createPart stores a new part owned by owner: inline when small, else as
// an incomplete part object, its chunks (owned by the part object, so the
// cluster's garbage collector removes them with it), then the part marked
// complete.
func (b *kubeBackend) createPart(ctx context.Context, ns string, p *codec.Part, owner metav1.OwnerReference) error {
	res, name := partResource(p.Kind), p.Digest.String()
	frame := p.Frame()
	obj := &partObject{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: partKind(p.Kind)},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, OwnerReferences: []metav1.OwnerReference{owner}},
		Spec:       partSpec{Digest: name, Size: int64(p.Size), StoredSize: int64(len(frame))},
	}
	if len(frame) <= InlinePartBytes {
		obj.Spec.Data, obj.Spec.Complete = frame, true
		return b.c.createQuiet(ctx, res, ns, name, obj)
	}
	chunks := codec.Chunks(frame, ChunkBytes)
	obj.Spec.Chunks = len(chunks)
	obj.Spec.FrameDigest = codec.Sum(frame).String()
	raw, err := b.c.create(ctx, res, ns, name, obj)
	if err != nil {
		return err
	}
	if obj, err = decodePart(raw); err != nil {
		return err
	}
	return b.finishPart(ctx, ns, res, obj, chunks)
}

// finishPart writes the chunks of an incomplete part and marks it complete.
func (b *kubeBackend) finishPart(ctx context.Context, ns, res string, obj *partObject, chunks [][]byte) error {
	self := ownerRef(obj.Kind, &obj.ObjectMeta)
	if self.Kind == "" {
		self.Kind = kindOfResource(res)
	}
	if err := b.writeChunks(ctx, ns, self, res+"/"+obj.Name, partChunkNames(obj), chunks); err != nil {
		return err
	}
	// Marking complete needs no precondition: it only ever goes from
	// false to true, and the uid precondition keeps it to this object.
	patch := map[string]any{"metadata": map[string]any{"uid": obj.UID}, "spec": map[string]any{"complete": true}}
	_, err := b.c.patch(ctx, res, ns, obj.Name, types.MergePatchType, patch)
	return err
}

func kindOfResource(res string) string {
	switch res {
	case resCharts:
		return "Chart"
	case resValues:
		return "Values"
	}
	return "Manifest"
}

// completePart handles a part found incomplete: another writer is writing
// its chunks, or crashed doing so. When this writer's frame is the same
// (the usual case: the encoding is deterministic) it writes the missing
// chunks itself; otherwise it waits for the other writer.
func (b *kubeBackend) completePart(ctx context.Context, ns string, p *codec.Part, obj *partObject) error {
	res := partResource(p.Kind)
	frame := p.Frame()
	chunks := codec.Chunks(frame, ChunkBytes)
	if obj.Spec.FrameDigest == codec.Sum(frame).String() && obj.Spec.Chunks == len(chunks) {
		return b.finishPart(ctx, ns, res, obj, chunks)
	}
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		raw, err := b.c.get(ctx, res, ns, obj.Name)
		if err != nil {
			return err
		}
		cur, err := decodePart(raw)
		if err != nil {
			return err
		}
		if cur.UID != obj.UID {
			return fmt.Errorf("%s part %s: %w: it was replaced while being written", p.Kind, p.Digest.Short(), ErrConflict)
		}
		if cur.Spec.Complete {
			return nil
		}
	}
	return fmt.Errorf("%s part %s is being written by another client with a different encoding and did not complete", p.Kind, p.Digest.Short())
}

// cleanupPart removes owner from the part's ownerReferences, deleting the
// part (and then its chunks) when no live Release owns it any more. A
// delete carries the resourceVersion it was decided on, so an owner added
// concurrently (ensurePart) makes it look again instead of deleting a part
// that is about to be referenced. Removing owner alone needs no such
// precondition: a JSON patch that first tests that the entry is still
// owner's removes it from the latest version, whatever other owners came
// or went meanwhile. A part shared by many releases being installed and
// uninstalled at once changes all the time: attempts are spaced by a
// growing, jittered backoff.
func (b *kubeBackend) cleanupPart(ctx context.Context, ns string, k codec.Kind, d codec.Digest, owner types.UID) error {
	res, name := partResource(k), d.String()
	var bo backoff
	for attempt := 0; attempt < cleanupAttempts; attempt++ {
		if attempt > 0 {
			if err := bo.wait(ctx); err != nil {
				return err
			}
		}
		raw, err := b.c.get(ctx, res, ns, name)
		if objectMissing(err, res, name) {
			return nil
		}
		if err != nil {
			return err
		}
		obj, err := decodePart(raw)
		if err != nil {
			return err
		}
		var others []metav1.OwnerReference
		mine := -1
		for i, o := range obj.OwnerReferences {
			if o.UID != owner {
				others = append(others, o)
			} else if mine < 0 {
				mine = i
			}
		}
		keep, err := b.liveOwners(ctx, ns, others)
		if err != nil {
			return err
		}
		if b.hooks.cleanupDecided != nil {
			b.hooks.cleanupDecided(res, name)
		}
		if len(keep) == 0 {
			err := b.c.delete(ctx, res, ns, name, obj.UID, obj.ResourceVersion)
			switch {
			case isConflict(err):
				continue
			case objectMissing(err, res, name):
				b.known.remove(ns, d)
				return nil
			case err != nil:
				return err
			}
			b.known.remove(ns, d)
			return b.deleteChunks(ctx, ns, partChunkNames(obj))
		}
		if len(keep) == len(obj.OwnerReferences) {
			return nil
		}
		if len(keep) == len(others) && len(others) == len(obj.OwnerReferences)-1 {
			// Only owner goes: test-and-remove its entry.
			path := fmt.Sprintf("/metadata/ownerReferences/%d", mine)
			patch := []map[string]any{
				{"op": "test", "path": path + "/uid", "value": owner},
				{"op": "remove", "path": path},
			}
			_, err = b.c.patch(ctx, res, ns, name, types.JSONPatchType, patch)
			if st, ok := apiStatus(err); ok && st.Code == http.StatusUnprocessableEntity {
				continue // the entry moved: look again
			}
		} else {
			// Dead owners go too: the list as decided, if unchanged.
			patch := map[string]any{"metadata": map[string]any{"resourceVersion": obj.ResourceVersion, "ownerReferences": keep}}
			_, err = b.c.patch(ctx, res, ns, name, types.MergePatchType, patch)
		}
		switch {
		case isConflict(err):
			continue
		case objectMissing(err, res, name):
			return nil
		}
		return err
	}
	return fmt.Errorf("%s part %s: %w: its owners kept changing", k, d.Short(), ErrConflict)
}

// cleanupAttempts bounds the attempts of cleanupPart: with backoff, about a
// minute.
const cleanupAttempts = 60

// backoff spaces retries of a write that lost to concurrent writers:
// exponentially growing from 5 ms to a second, each wait drawn at random
// between half and all of the current step, so that writers that collided
// do not collide again in lockstep.
type backoff struct{ step time.Duration }

func (bo *backoff) wait(ctx context.Context) error {
	switch {
	case bo.step == 0:
		bo.step = 5 * time.Millisecond
	case bo.step < time.Second:
		bo.step *= 2
	}
	d := bo.step/2 + time.Duration(mrand.Int64N(int64(bo.step/2)+1))
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// liveOwners returns owners without the Releases that no longer exist
// (left by a crash between deleting a Release and cleaning up its parts).
// It checks from the newest owner back and stops at the first live one:
// that one alone keeps the part, so older owners are kept unchecked.
func (b *kubeBackend) liveOwners(ctx context.Context, ns string, owners []metav1.OwnerReference) ([]metav1.OwnerReference, error) {
	for i := len(owners) - 1; i >= 0; i-- {
		o := owners[i]
		if o.Kind != "Release" || o.APIVersion != apiVersion {
			return owners, nil // not ours to judge
		}
		m, err := b.c.getMeta(ctx, resReleases, ns, o.Name)
		if objectMissing(err, resReleases, o.Name) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m.UID == o.UID {
			return owners[:i+1], nil
		}
	}
	return nil, nil
}
