package cas

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/caswire"
)

// createFirstBytes: parts up to this canonical size that the store has not
// seen are created without first trying to add a referrer to them.
const createFirstBytes = 1 << 20

// Parts reads the referenced parts, in parallel. A part that is absent,
// not yet complete or missing a chunk is left out of the result. A part
// whose objects are damaged (a part object or chunk that does not decode,
// a renumbered chunk) is returned as an empty frame, which the engine
// reports as corrupt for the releases that use it, and for them only.
// With a store that has GetMany, the part objects of one kind and
// namespace are read in one call (batches), alongside the single reads.
func (b *Backend) Parts(ctx context.Context, refs []driver.PartRef) (map[driver.Digest][]byte, error) {
	out := make(map[driver.Digest][]byte, len(refs))
	var mu sync.Mutex
	read := func(ctx context.Context, ref driver.PartRef, pre *Object) error {
		frame, err := b.readPart(ctx, ref, pre)
		if errors.Is(err, driver.ErrCorrupt) {
			b.log("helmstore: %s part %s in namespace %q is damaged: %v", ref.Kind, ref.Digest.Short(), ref.Namespace, err)
			frame, err = []byte{}, nil
		}
		if err != nil || frame == nil {
			return err
		}
		mu.Lock()
		out[ref.Digest] = frame
		mu.Unlock()
		return nil
	}
	batches := b.batches(refs)
	err := b.parallel(ctx, len(batches), func(ctx context.Context, i int) error {
		rs := batches[i]
		if len(rs) == 1 {
			return read(ctx, rs[0], nil)
		}
		names := make([]string, len(rs))
		for j, r := range rs {
			names[j] = partRef(r).Name
		}
		first := partRef(rs[0])
		objs, err := b.s.(BatchReader).GetMany(ctx, first.Kind, first.Namespace, names, ReadOptions{Stale: true})
		if err != nil {
			objs = nil // read one by one instead
		}
		return b.parallel(ctx, len(rs), func(ctx context.Context, j int) error {
			return read(ctx, rs[j], objs[names[j]])
		})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// batchNames bounds the names one GetMany call asks for (they travel in
// the request's URL on Kubernetes).
const batchNames = 64

// batches groups refs into the reads Parts makes: with a store that has
// GetMany, the refs of one kind and namespace together (at most batchNames
// each); otherwise, and for a kind of which refs names one part, one ref
// each.
func (b *Backend) batches(refs []driver.PartRef) [][]driver.PartRef {
	if _, ok := b.s.(BatchReader); !ok {
		out := make([][]driver.PartRef, len(refs))
		for i := range refs {
			out[i] = refs[i : i+1]
		}
		return out
	}
	type group struct {
		kind Kind
		ns   string
	}
	var order []group
	groups := map[group][]driver.PartRef{}
	for _, r := range refs {
		ref := partRef(r)
		g := group{ref.Kind, ref.Namespace}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], r)
	}
	var out [][]driver.PartRef
	for _, g := range order {
		rs := groups[g]
		if len(rs) == 1 {
			out = append(out, rs)
			continue
		}
		for len(rs) > 0 {
			n := min(len(rs), batchNames)
			out = append(out, rs[:n])
			rs = rs[n:]
		}
	}
	return out
}

// readPart returns the frame of one part, or nil if it is not stored. A
// part's bytes never change once complete, and the engine checks them
// against the digest, so the part and its chunks are read stale first
// (the part object is read already if pre is not nil); if that does not
// find the part complete with all its chunks, it is read again before it
// counts as missing.
func (b *Backend) readPart(ctx context.Context, ref driver.PartRef, pre *Object) ([]byte, error) {
	if pre != nil {
		frame, err := b.partFrame(ctx, ref, pre, true)
		if frame != nil || err != nil {
			return frame, err
		}
	} else {
		frame, err := b.readPartFrom(ctx, ref, true)
		if frame != nil || err != nil {
			return frame, err
		}
	}
	return b.readPartFrom(ctx, ref, false)
}

// readPartFrom reads one part, stale or not; nil if it is absent,
// incomplete or missing a chunk.
func (b *Backend) readPartFrom(ctx context.Context, ref driver.PartRef, stale bool) ([]byte, error) {
	obj, err := b.s.Get(ctx, partRef(ref), ReadOptions{Stale: stale})
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return b.partFrame(ctx, ref, obj, stale)
}

// partFrame returns the frame of the part ref held by obj, its part
// object, reading its chunks (stale or not); nil if it is incomplete or
// missing a chunk.
func (b *Backend) partFrame(ctx context.Context, ref driver.PartRef, obj *Object, stale bool) ([]byte, error) {
	if obj.Err != nil {
		return nil, obj.Err
	}
	if obj.Part == nil {
		return nil, fmt.Errorf("%s part object %s: %w: no part record", ref.Kind, obj.Name, driver.ErrCorrupt)
	}
	if !obj.Part.Complete {
		return nil, nil
	}
	b.learn(ref.Namespace, ref.Digest)
	if obj.Part.Chunks == 0 {
		return obj.Part.Data, nil
	}
	return b.readChunks(ctx, partChunks(obj), stale)
}

// partChunkNames names the chunks of the part object obj, which this
// writer made (its count is not read from the store).
func partChunkNames(obj *Object) []string {
	names := make([]string, obj.Part.Chunks)
	for i := range names {
		names[i] = caswire.ChunkName(obj.UID, "", i)
	}
	return names
}

// writeChunks creates the chunks of a frame, referred to by owner. A chunk
// that exists already was written by another writer of the same frame
// (same owner UID, same bytes) and is kept.
func (b *Backend) writeChunks(ctx context.Context, ns string, owner Referrer, of string, names []string, chunks [][]byte) error {
	return b.parallel(ctx, len(chunks), func(ctx context.Context, i int) error {
		_, err := b.s.Create(ctx, &Object{Kind: KindChunk, Namespace: ns, Name: names[i], Referrers: []Referrer{owner},
			Chunk: &ChunkRecord{Of: of, Index: i, Data: chunks[i]}})
		if errors.Is(err, ErrExists) {
			return nil
		}
		return err
	})
}

// deleteChunks removes the named chunks; absent ones are fine.
func (b *Backend) deleteChunks(ctx context.Context, ns string, names []string) error {
	return b.parallel(ctx, len(names), func(ctx context.Context, i int) error {
		err := b.s.Delete(ctx, Ref{Kind: KindChunk, Namespace: ns, Name: names[i]}, "")
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		return err
	})
}

// ensurePart makes p stored in ns, complete, and referred to by owner
// (among its other referrers). It never rewrites the bytes of a part that
// is stored whole: an existing part only gains the referrer, added
// atomically to whatever version is current, so it cannot be lost to a
// concurrent change. A concurrent cleanupPart that read the part before
// then fails its version precondition and looks again; one that deleted
// it first makes the addition fail with ErrNotFound, and the part is
// created anew. A part marked Rewrite (a read found its copy damaged), or
// whose object is damaged in a way this write sees (damagedPart), is
// healed instead (healPart).
//
// Which request goes first is a guess, only for speed: a part this store
// has seen stored, or a large one (whose frame is costly to compute), is
// referred to first; a small one never seen (new values, a new manifest)
// is created first.
func (b *Backend) ensurePart(ctx context.Context, ns string, p *driver.Part, owner Referrer) error {
	if p.Rewrite {
		return b.healPart(ctx, ns, p, owner)
	}
	ref := Ref{Kind: partKind(p.Kind), Namespace: ns, Name: p.Digest.String()}
	createFirst := !b.knows(ns, p.Digest) && p.Size <= createFirstBytes
	what := fmt.Sprintf("%s part %s: it kept appearing and disappearing", p.Kind, p.Digest.Short())
	heal := false
	err := b.retry(ctx, what, func(ctx context.Context) (bool, error) {
		order := []bool{createFirst, !createFirst}
		createFirst = true // after a lost race: a cleanup deleted it
		for _, create := range order {
			if create {
				err := b.createPart(ctx, ns, p, []Referrer{owner})
				if err == nil {
					b.learn(ns, p.Digest)
				}
				if !errors.Is(err, ErrExists) {
					return true, err
				}
				continue
			}
			obj, err := b.addReferrer(ctx, ref, owner)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if errors.Is(err, driver.ErrCorrupt) {
				heal = true // an object that does not decode
				return true, nil
			}
			if err != nil {
				return true, err
			}
			b.learn(ns, p.Digest)
			if damagedPart(obj, p, owner) {
				heal = true
				return true, nil
			}
			if obj.Part.Complete {
				return true, nil
			}
			return true, b.completePart(ctx, p, obj)
		}
		return false, nil
	})
	if err == nil && heal {
		return b.healPart(ctx, ns, p, owner)
	}
	return err
}

// damagedPart reports whether obj, the part object of p as stored after
// owner was added to its referrers, is damaged in a way a write sees
// without reading its chunks or making p's frame: it does not decode or
// holds no part record; its record names another digest or size; an
// inline frame (written complete, at once) is incomplete or not of the
// size recorded, or sits beside a chunk count; or owner is its only
// referrer (the references of the heads that use it are lost: a part that
// exists has a referrer until a cleanup deletes it).
func damagedPart(obj *Object, p *driver.Part, owner Referrer) bool {
	if obj.Err != nil || obj.Part == nil {
		return true
	}
	r := obj.Part
	if r.Digest != p.Digest.String() || r.Size != int64(p.Size) {
		return true
	}
	if r.Chunks == 0 && (!r.Complete || int64(len(r.Data)) != r.StoredSize) || r.Chunks > 0 && len(r.Data) > 0 {
		return true
	}
	return !slices.ContainsFunc(obj.Referrers, func(r Referrer) bool { return r.UID != owner.UID })
}

// healPart writes p over its part object in ns, which is damaged (or which
// a read found damaged: p.Rewrite), keeping every reference to it: the
// object is deleted at the version read and created anew, complete, with a
// new UID (so with chunks of its own; the old ones lose their owner and
// go with it, by the cluster's garbage collector or Collect), referred to
// by owner, by the referrers of the damaged object that decode, and by
// every head object of ns that references p (listed: the damaged object's
// own list may be what was lost). A reader meanwhile finds the part
// missing, as it found it damaged. If another writer creates the part
// between the delete and the create, that one is kept and gains the
// referrers.
func (b *Backend) healPart(ctx context.Context, ns string, p *driver.Part, owner Referrer) error {
	refs, err := b.referringHeads(ctx, ns, p.Digest)
	if err != nil {
		return err
	}
	refs = addReferrers(refs, []Referrer{owner})
	ref := Ref{Kind: partKind(p.Kind), Namespace: ns, Name: p.Digest.String()}
	deleted := "" // the UID of the damaged object this heal deleted
	b.log("helmstore: %s part %s in namespace %q is damaged: writing it again", p.Kind, p.Digest.Short(), ns)
	what := fmt.Sprintf("heal %s part %s: it kept changing", p.Kind, p.Digest.Short())
	return b.retry(ctx, what, func(ctx context.Context) (bool, error) {
		obj, err := b.s.Get(ctx, ref, ReadOptions{})
		switch {
		case errors.Is(err, ErrNotFound):
			err := b.createPart(ctx, ns, p, refs)
			if errors.Is(err, ErrExists) {
				return false, nil
			}
			if err == nil {
				b.learn(ns, p.Digest)
			}
			return true, err
		case err != nil:
			return true, err
		case deleted != "" && obj.UID != deleted:
			// Created anew by another writer since: it gains the
			// referrers.
			for _, r := range refs {
				if obj.ReferredBy(r.UID) {
					continue
				}
				if _, err := b.addReferrer(ctx, ref, r); err != nil {
					return true, err
				}
			}
			return true, nil
		}
		refs = addReferrers(refs, obj.Referrers)
		err = b.s.Delete(ctx, ref, obj.Version)
		if errors.Is(err, ErrVersionMismatch) || errors.Is(err, ErrNotFound) {
			return false, nil
		}
		if err != nil {
			return true, err
		}
		b.forgetPart(ns, p.Digest)
		deleted = obj.UID
		return false, nil
	})
}

// addReferrers returns refs with those of more it lacks (by UID) added.
func addReferrers(refs, more []Referrer) []Referrer {
	for _, r := range more {
		if r.UID != "" && !slices.ContainsFunc(refs, func(x Referrer) bool { return x.UID == r.UID }) {
			refs = append(refs, r)
		}
	}
	return refs
}

// referringHeads returns, as referrers, the head objects of ns whose
// record references the part d as a part object (not embedded), pending
// ones included (a superset is safe: a referrer whose head is gone is
// dropped by the next cleanup).
func (b *Backend) referringHeads(ctx context.Context, ns string, d driver.Digest) ([]Referrer, error) {
	objs, err := b.s.List(ctx, Selector{Kind: KindHead, Namespace: ns})
	if err != nil {
		return nil, err
	}
	text := d.String()
	var out []Referrer
	for _, o := range objs {
		if o.Head == nil || o.UID == "" {
			continue
		}
		ds := o.Head.Parts
		uses := slices.Contains([]string{ds.Chart, ds.Values, ds.Manifest, ds.ValuesBase, ds.ManifestBase}, text)
		if _, embedded := o.Head.frame(text); uses && !embedded {
			out = append(out, Referrer{Kind: KindHead, Name: o.Name, UID: o.UID})
		}
	}
	return out, nil
}

// addReferrer adds r to the referrers of the part object ref names and
// returns it as stored after that: in one call if the store can, else by
// compare-and-swap (refusing, as driver.ErrCorrupt, an object that does
// not decode or holds no part record, which the store may not take back).
func (b *Backend) addReferrer(ctx context.Context, ref Ref, r Referrer) (*Object, error) {
	if b.adder != nil {
		obj, err := b.adder.AddReferrer(ctx, ref, r)
		if !errors.Is(err, errors.ErrUnsupported) {
			return obj, err
		}
	}
	var out *Object
	err := b.retry(ctx, fmt.Sprintf("add a referrer to %s", ref.Name), func(ctx context.Context) (bool, error) {
		obj, err := b.s.Get(ctx, ref, ReadOptions{})
		if err != nil {
			return true, err
		}
		if obj.Err != nil {
			return true, obj.Err
		}
		if obj.Part == nil {
			return true, fmt.Errorf("part object %s: %w: no part record", ref.Name, driver.ErrCorrupt)
		}
		if obj.ReferredBy(r.UID) {
			out = obj
			return true, nil
		}
		obj.Referrers = append(slices.Clone(obj.Referrers), r)
		stored, err := b.s.Replace(ctx, obj)
		if errors.Is(err, ErrVersionMismatch) {
			return false, nil
		}
		if err != nil {
			return true, err
		}
		obj.Version = stored.Version
		out = obj
		return true, nil
	})
	return out, err
}

// createPart stores a new part referred to by referrers: inline when
// small, else as an incomplete part object, its chunks (referred to by the
// part object), then the part replaced complete.
func (b *Backend) createPart(ctx context.Context, ns string, p *driver.Part, referrers []Referrer) error {
	frame := p.Frame()
	obj := &Object{Kind: partKind(p.Kind), Namespace: ns, Name: p.Digest.String(), Referrers: referrers,
		Part: &PartRecord{Digest: p.Digest.String(), Size: int64(p.Size), StoredSize: int64(len(frame))}}
	if len(frame) <= b.cfg.InlinePartBytes {
		obj.Part.Data, obj.Part.Complete = frame, true
		_, err := b.s.Create(ctx, obj)
		return err
	}
	chunks := driver.Chunks(frame, b.cfg.ChunkBytes)
	obj.Part.Chunks = len(chunks)
	obj.Part.FrameDigest = driver.Sum(frame).String()
	stored, err := b.s.Create(ctx, obj)
	if err != nil {
		return err
	}
	obj.UID, obj.Version, obj.Created = stored.UID, stored.Version, stored.Created
	return b.finishPart(ctx, obj, chunks)
}

// finishPart writes the chunks of the incomplete part obj and replaces it
// complete. Losing the replace to a referrer added meanwhile, it reads the
// part again and completes that version (unless another writer did).
func (b *Backend) finishPart(ctx context.Context, obj *Object, chunks [][]byte) error {
	self := Referrer{Kind: obj.Kind, Name: obj.Name, UID: obj.UID}
	if err := b.writeChunks(ctx, obj.Namespace, self, obj.Name, partChunkNames(obj), chunks); err != nil {
		return err
	}
	what := fmt.Sprintf("mark part %s complete", obj.Name)
	return b.retry(ctx, what, func(ctx context.Context) (bool, error) {
		done := *obj
		rec := *obj.Part
		rec.Complete = true
		done.Part = &rec
		_, err := b.s.Replace(ctx, &done)
		if !errors.Is(err, ErrVersionMismatch) {
			return true, err
		}
		cur, err := b.s.Get(ctx, obj.Ref(), ReadOptions{})
		if err != nil {
			return true, err
		}
		switch {
		case cur.Err != nil:
			return true, cur.Err
		case cur.UID != obj.UID:
			return true, fmt.Errorf("part %s: %w: it was replaced while being written", obj.Name, ErrConflict)
		case cur.Part != nil && cur.Part.Complete:
			return true, nil
		}
		obj = cur
		return false, nil
	})
}

// completePart handles a part found incomplete: another writer is writing
// its chunks, or died doing so. When this writer's frame is the same (the
// usual case: the encoding is deterministic) it writes the missing chunks
// itself; otherwise it waits, as the retry policy allows, for the other
// writer.
func (b *Backend) completePart(ctx context.Context, p *driver.Part, obj *Object) error {
	frame := p.Frame()
	chunks := driver.Chunks(frame, b.cfg.ChunkBytes)
	if obj.Part.FrameDigest == driver.Sum(frame).String() && obj.Part.Chunks == len(chunks) {
		return b.finishPart(ctx, obj, chunks)
	}
	what := fmt.Sprintf("%s part %s: being written by another client with a different encoding, it did not complete", p.Kind, p.Digest.Short())
	return b.retry(ctx, what, func(ctx context.Context) (bool, error) {
		cur, err := b.s.Get(ctx, obj.Ref(), ReadOptions{})
		if err != nil {
			return true, err
		}
		switch {
		case cur.Err != nil:
			return true, cur.Err
		case cur.UID != obj.UID:
			return true, fmt.Errorf("%s part %s: %w: it was replaced while being written", p.Kind, p.Digest.Short(), ErrConflict)
		}
		return cur.Part != nil && cur.Part.Complete, nil
	})
}

// cleanupPart removes owner from the part's referrers, deleting the part
// (and then its chunks) when no live head refers to it any more. Each
// write carries the version it was decided on, so a referrer added
// concurrently (ensurePart) makes it look again instead of deleting a part
// that is about to be referenced.
func (b *Backend) cleanupPart(ctx context.Context, ns string, k driver.Kind, d driver.Digest, owner string) error {
	ref := Ref{Kind: partKind(k), Namespace: ns, Name: d.String()}
	what := fmt.Sprintf("clean up %s part %s: its referrers kept changing", k, d.Short())
	return b.retry(ctx, what, func(ctx context.Context) (bool, error) {
		obj, err := b.s.Get(ctx, ref, ReadOptions{})
		if errors.Is(err, ErrNotFound) {
			return true, nil
		}
		if err != nil {
			return true, err
		}
		return b.collectPart(ctx, obj, owner)
	})
}

// collectPart is one attempt of cleanupPart on the part object obj as read:
// done=false when it lost a race and should read again.
func (b *Backend) collectPart(ctx context.Context, obj *Object, owner string) (done bool, err error) {
	var others []Referrer
	for _, r := range obj.Referrers {
		if r.UID != owner {
			others = append(others, r)
		}
	}
	keep, err := b.liveReferrers(ctx, obj.Namespace, others)
	if err != nil {
		return true, err
	}
	d, _ := driver.ParseDigest(obj.Name)
	if h := b.hooks().CleanupDecided; h != nil {
		h(partCodecKind(obj.Kind), d)
	}
	if len(keep) == 0 {
		err := b.s.Delete(ctx, obj.Ref(), obj.Version)
		switch {
		case errors.Is(err, ErrVersionMismatch):
			return false, nil
		case errors.Is(err, ErrNotFound):
			b.forgetPart(obj.Namespace, d)
			return true, nil
		case err != nil:
			return true, err
		}
		b.forgetPart(obj.Namespace, d)
		if obj.Err != nil || obj.Part == nil || obj.Part.Chunks == 0 {
			return true, nil // no chunks, or none it can name (left to Collect)
		}
		return true, b.deleteChunkSet(ctx, partChunks(obj))
	}
	if len(keep) == len(obj.Referrers) || obj.Err != nil {
		return true, nil
	}
	obj.Referrers = keep
	_, err = b.s.Replace(ctx, obj)
	switch {
	case errors.Is(err, ErrVersionMismatch):
		return false, nil
	case errors.Is(err, ErrNotFound):
		return true, nil
	}
	return true, err
}

// liveReferrers returns refs without the head objects that no longer exist
// (left by a crash between deleting a head and cleaning up its parts). It
// checks from the newest referrer back and stops at the first live one:
// that one alone keeps the part, so older ones are kept unchecked.
func (b *Backend) liveReferrers(ctx context.Context, ns string, refs []Referrer) ([]Referrer, error) {
	for i := len(refs) - 1; i >= 0; i-- {
		r := refs[i]
		if r.Kind != KindHead {
			return refs, nil // not the protocol's to judge
		}
		m, err := b.s.Get(ctx, Ref{Kind: KindHead, Namespace: ns, Name: r.Name}, ReadOptions{Meta: true})
		if errors.Is(err, ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m.UID == r.UID {
			return refs[:i+1], nil
		}
	}
	return nil, nil
}
