package cas

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/caswire"
)

// headBody is where a head's body goes: inline, or in chunks.
type headBody struct {
	inline []byte
	chunks *ChunkSet
	frame  []byte // set with chunks
}

// splitBody decides where h.Body (the record's compressed frame, stored as
// it is) goes.
func (b *Backend) splitBody(h *driver.Head) *headBody {
	if len(h.Body) <= b.cfg.InlineBodyBytes {
		return &headBody{inline: h.Body}
	}
	// A fresh id per write: an Update never overwrites the chunks the
	// current body is read from.
	id := make([]byte, 4)
	rand.Read(id)
	return &headBody{frame: h.Body, chunks: &ChunkSet{ID: hex.EncodeToString(id), Count: len(driver.Chunks(h.Body, b.cfg.ChunkBytes)),
		Size: int64(len(h.Body)), Digest: driver.Sum(h.Body).String()}}
}

// headObject returns the head object for h, committed, embedding the
// frames embedded.
func (b *Backend) headObject(h *driver.Head, body *headBody, embedded []EmbeddedFrame) *Object {
	return &Object{Kind: KindHead, Namespace: h.Namespace, Name: b.cfg.HeadName(h.Key), Labels: h.AllLabels(),
		Head: &HeadRecord{
			HeadFields: HeadFields{Key: h.Key, Name: h.Name, Version: h.Version, Status: h.Status, Owner: h.Owner,
				CreatedAt: h.CreatedAt, ModifiedAt: h.ModifiedAt},
			SummaryFields: h.SummaryFields,
			Parts:         h.DigestText(), Embedded: embedded,
			Body: body.inline, BodyChunks: body.chunks,
		}}
}

// corruptHead is the error for a head object that cannot be read.
func corruptHead(obj *Object, format string, a ...any) error {
	return fmt.Errorf("head object %s in namespace %s: %w: %s", obj.Name, obj.Namespace, driver.ErrCorrupt, fmt.Sprintf(format, a...))
}

// refsHead returns the head obj holds with only what its references need:
// namespace, key, CreatedAt and digests.
func refsHead(obj *Object) (*driver.Head, error) {
	if obj.Err != nil {
		return nil, obj.Err
	}
	if obj.Head == nil {
		return nil, corruptHead(obj, "no head record")
	}
	h := &driver.Head{Namespace: obj.Namespace, Key: obj.Head.Key, CreatedAt: obj.Head.CreatedAt}
	if err := h.SetDigestText(obj.Head.Parts); err != nil {
		return nil, corruptHead(obj, "%v", err)
	}
	return h, nil
}

// refsOf returns the part objects obj references (not the parts it
// embeds).
func refsOf(obj *Object) ([]driver.PartRef, error) {
	h, err := refsHead(obj)
	if err != nil {
		return nil, err
	}
	return objectRefs(obj, h.Parts()), nil
}

// someRefsOf returns the part objects obj references as far as its
// digests parse (for cleaning up after a damaged head).
func someRefsOf(obj *Object) []driver.PartRef {
	if obj.Head == nil {
		return nil
	}
	h := driver.Head{Namespace: obj.Namespace}
	h.SetDigestText(obj.Head.Parts) // those that do not parse stay zero
	return objectRefs(obj, h.Parts())
}

func isPending(obj *Object) bool { _, ok := obj.Labels[caswire.LabelPending]; return ok }

// isHidden reports whether obj is a pending head that is never visible:
// one being removed after a failed Create (abandon), or one written by an
// early version of crsplit, which wrote the head only with the commit.
func isHidden(obj *Object) bool {
	return isPending(obj) && obj.Labels[caswire.LabelPending] != caswire.PendingParts
}

// partRef returns the reference of the part object holding ref.
func partRef(ref driver.PartRef) Ref {
	return Ref{Kind: partKind(ref.Kind), Namespace: ref.Namespace, Name: ref.Digest.String()}
}

// partKind returns the kind of the objects holding parts of kind k.
func partKind(k driver.Kind) Kind { return Kind(caswire.PartKind(k)) }

// visible reports whether the head object obj can be read: committed, or
// pending=parts with every part it references stored, complete and
// referred to by it, and its chunked body all there. A referrer leaves a
// part only when the head drops it or is deleted, so once visible a head
// stays so. Parts are checked with stale reads first. h, if not nil, is
// obj's head: a chunked body read for the check is kept in it.
func (b *Backend) visible(ctx context.Context, obj *Object, h *driver.Head) (bool, error) {
	if !isPending(obj) {
		return true, nil
	}
	if isHidden(obj) {
		return false, nil
	}
	refs, err := refsOf(obj)
	if err != nil {
		return false, err
	}
	owned := make([]bool, len(refs))
	err = b.parallel(ctx, len(refs), func(ctx context.Context, i int) error {
		for _, stale := range []bool{true, false} {
			p, err := b.s.Get(ctx, partRef(refs[i]), ReadOptions{Stale: stale})
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if p.Err != nil {
				return p.Err
			}
			if p.Part != nil && p.Part.Complete && p.ReferredBy(obj.UID) {
				owned[i] = true
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	for _, ok := range owned {
		if !ok {
			return false, nil
		}
	}
	if obj.Head.BodyChunks != nil {
		if h == nil {
			if h, err = b.headOf(obj); err != nil {
				return false, err
			}
		}
		if err := b.loadBody(ctx, obj, h); errors.Is(err, driver.ErrCorrupt) {
			return false, nil // chunks still being written
		} else if err != nil {
			return false, err
		}
	}
	return true, nil
}

// keyOf returns the key a head object that cannot be read is stored under:
// its record's key if that names it, else its name.
func (b *Backend) keyOf(obj *Object) string {
	if obj.Head != nil && obj.Head.Key != "" && b.cfg.HeadName(obj.Head.Key) == obj.Name {
		return obj.Head.Key
	}
	return obj.Name
}

// headOf returns the head stored in obj, without its body when the body is
// in chunks (loadBody fetches it).
func (b *Backend) headOf(obj *Object) (*driver.Head, error) {
	h, err := b.summaryHead(obj)
	if err != nil {
		return nil, err
	}
	s := obj.Head
	if err := h.SetDigestText(s.Parts); err != nil {
		return nil, corruptHead(obj, "%v", err)
	}
	h.Frames = embeddedFrames(obj, h)
	switch {
	case len(s.Body) > 0:
		h.Body = s.Body
	case s.BodyChunks == nil:
		return nil, corruptHead(obj, "no release record")
	}
	return h, nil
}

// summaryHead returns the head stored in obj with what a listing returns of
// it: no digests and no body (obj may be SummaryOnly).
func (b *Backend) summaryHead(obj *Object) (*driver.Head, error) {
	if obj.Err != nil {
		return nil, obj.Err
	}
	s := obj.Head
	if s == nil {
		return nil, corruptHead(obj, "no head record")
	}
	h := &driver.Head{
		Namespace: obj.Namespace, Key: s.Key, Name: s.Name, Version: s.Version, Status: s.Status, Owner: s.Owner,
		CreatedAt: s.CreatedAt, ModifiedAt: s.ModifiedAt,
		SummaryFields: s.SummaryFields,
		Labels:        map[string]string{},
	}
	if s.Key == "" || b.cfg.HeadName(s.Key) != obj.Name {
		return nil, corruptHead(obj, "its key %q does not match the object's name", s.Key)
	}
	for k, v := range obj.Labels {
		if !driver.IsSystemLabel(k) && !caswire.ProtocolLabel(k) {
			h.Labels[k] = v
		}
	}
	return h, nil
}

// bodyChunkNames names the chunks of the chunked body cs of the head
// object obj, which this writer made (its count is not read from the
// store).
func bodyChunkNames(obj *Object, cs *ChunkSet) []string {
	names := make([]string, cs.Count)
	for i := range names {
		names[i] = caswire.ChunkName(obj.UID, cs.ID, i)
	}
	return names
}

// loadBody fetches the chunked body of h, stored as obj describes.
func (b *Backend) loadBody(ctx context.Context, obj *Object, h *driver.Head) error {
	cs := obj.Head.BodyChunks
	if cs == nil || h.Body != nil {
		return nil
	}
	// Chunks never change once written (an Update writes new ones):
	// stale reads first, fresh ones if they do not hold them all yet.
	for _, stale := range []bool{true, false} {
		frame, err := b.readChunks(ctx, bodyChunks(obj, cs), stale)
		if err != nil {
			if errors.Is(err, driver.ErrCorrupt) {
				return fmt.Errorf("release %q in namespace %q: %w", h.Key, h.Namespace, err)
			}
			return err
		}
		if frame != nil && driver.Sum(frame).String() == cs.Digest {
			h.Body = frame
			return nil
		}
	}
	return fmt.Errorf("release %q in namespace %q: %w: its record's chunks are missing or do not match their digest", h.Key, h.Namespace, driver.ErrCorrupt)
}

// Heads returns the visible heads matching q.
func (b *Backend) Heads(ctx context.Context, q driver.Query) ([]*driver.Head, error) {
	var objs []*Object
	if q.Key != "" && q.Namespace != "" {
		obj, err := b.s.Get(ctx, Ref{Kind: KindHead, Namespace: q.Namespace, Name: b.cfg.HeadName(q.Key)}, ReadOptions{})
		if errors.Is(err, ErrNotFound) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		objs = append(objs, obj)
	} else {
		var err error
		if objs, err = b.s.List(ctx, selector(q, b.cfg.HeadName)); err != nil {
			return nil, err
		}
	}
	out := make([]*driver.Head, 0, len(objs))
	for _, obj := range objs {
		h, err := b.headOrDamaged(ctx, obj, q)
		if err != nil {
			return nil, err
		}
		if h != nil {
			out = append(out, h)
		}
	}
	driver.SortHeads(out)
	return out, nil
}

// headOrDamaged is decodeHead, except that a head object that cannot be
// read is returned as a head with Err set (one damaged object must not
// break every list, and must stay deletable). One whose body chunks were
// missing may just have been updated, its old chunks deleted, since it was
// read: it is read again, and goes by its new version if it has one.
func (b *Backend) headOrDamaged(ctx context.Context, obj *Object, q driver.Query) (*driver.Head, error) {
	h, err := b.decodeHead(ctx, obj, q)
	if err == nil || !errors.Is(err, driver.ErrCorrupt) {
		return h, err
	}
	if obj.Name == "" {
		return nil, err // not even a name: nothing to report it as
	}
	if fresh, gerr := b.s.Get(ctx, obj.Ref(), ReadOptions{}); errors.Is(gerr, ErrNotFound) {
		return nil, nil // deleted meanwhile
	} else if gerr != nil {
		return nil, gerr
	} else if fresh.UID != obj.UID || fresh.Version != obj.Version {
		if h, err = b.decodeHead(ctx, fresh, q); err == nil || !errors.Is(err, driver.ErrCorrupt) {
			return h, err
		}
		obj = fresh
	}
	key := b.keyOf(obj)
	if q.Key != "" {
		if b.cfg.HeadName(q.Key) != obj.Name {
			return nil, nil
		}
		key = q.Key
	}
	dh := damagedHead(obj, key, err)
	if q.Namespace != "" && dh.Namespace != q.Namespace || q.Name != "" && dh.Name != "" && dh.Name != q.Name || q.Version != nil && dh.Version != 0 && dh.Version != *q.Version {
		return nil, nil
	}
	return dh, nil
}

// damagedHead is the head reported for the head object obj stored under
// key, which cannot be read because of cause: Namespace and Key, Err, and
// what the key and the labels tell (name, version, status, owner) for
// queries.
func damagedHead(obj *Object, key string, cause error) *driver.Head {
	if !errors.Is(cause, driver.ErrCorrupt) {
		cause = fmt.Errorf("%w: %v", driver.ErrCorrupt, cause)
	}
	h := &driver.Head{Namespace: obj.Namespace, Key: key, Labels: map[string]string{},
		Err: fmt.Errorf("release %q in namespace %q: its head object %s cannot be read: %w", key, obj.Namespace, obj.Name, cause)}
	if name, version, err := driver.ParseKey(key); err == nil {
		h.Name, h.Version = name, version
	}
	h.Status, h.Owner = obj.Labels[driver.LabelStatus], obj.Labels[driver.LabelOwner]
	return h
}

// decodeHead returns the head stored in obj, or nil if it is not visible
// or does not match q.
func (b *Backend) decodeHead(ctx context.Context, obj *Object, q driver.Query) (*driver.Head, error) {
	if obj.Err == nil && isHidden(obj) {
		return nil, nil
	}
	h, err := b.headOf(obj)
	if err != nil {
		return nil, err
	}
	if !q.Matches(h) {
		return nil, nil
	}
	if isPending(obj) {
		fresh, err := b.visibleVersion(ctx, obj, h)
		if err != nil || fresh == nil {
			return nil, err
		}
		if fresh != obj {
			// Changed since it was listed: go by what it is now.
			if obj = fresh; isHidden(obj) {
				return nil, nil
			}
			if h, err = b.headOf(obj); err != nil {
				return nil, err
			}
			if !q.Matches(h) {
				return nil, nil
			}
		}
	}
	b.seen.saw(obj)
	if err := b.loadBody(ctx, obj, h); err != nil {
		return nil, err
	}
	return h, nil
}

// selector returns the Selector of the head objects that may match q.
func selector(q driver.Query, headName func(string) string) Selector {
	sel := Selector{Kind: KindHead, Namespace: q.Namespace, Labels: map[string]string{}}
	if q.Key != "" {
		sel.Name = headName(q.Key)
	}
	if q.Name != "" {
		sel.Labels[driver.LabelName] = q.Name
	}
	if q.Status != "" {
		sel.Labels[driver.LabelStatus] = q.Status
	}
	if q.Version != nil {
		sel.Labels[driver.LabelVersion] = strconv.Itoa(*q.Version)
	}
	if q.CreatedAt != nil {
		sel.Labels[driver.LabelCreatedAt] = strconv.FormatInt(*q.CreatedAt, 10)
	}
	if q.ModifiedAt != nil {
		sel.Labels[driver.LabelModifiedAt] = strconv.FormatInt(*q.ModifiedAt, 10)
	}
	for k, v := range q.Labels {
		sel.Labels[k] = v
	}
	return sel
}

// getCommitted returns the visible head object stored under key, or
// driver.ErrReleaseNotFound.
func (b *Backend) getCommitted(ctx context.Context, ns, key string) (*Object, error) {
	obj, err := b.getHead(ctx, ns, b.cfg.HeadName(key))
	if err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, driver.ErrReleaseNotFound
	}
	if obj.Err != nil {
		return nil, obj.Err
	}
	if obj.Head == nil || obj.Head.Key != key {
		return nil, corruptHead(obj, "its key does not match the object's name")
	}
	if obj, err = b.visibleVersion(ctx, obj, nil); err == nil && obj == nil {
		err = driver.ErrReleaseNotFound
	}
	return obj, err
}

// visibleVersion returns obj if it is visible; otherwise, if the head
// changed since obj was read (an Update elsewhere may have committed it and
// dropped a part obj references), its current version if that is visible;
// otherwise nil. h, if not nil, is obj's head (as for visible).
func (b *Backend) visibleVersion(ctx context.Context, obj *Object, h *driver.Head) (*Object, error) {
	if ok, err := b.visible(ctx, obj, h); err != nil || ok {
		if err != nil {
			return nil, err
		}
		return obj, nil
	}
	cur, err := b.getHead(ctx, obj.Namespace, obj.Name)
	if err != nil || cur == nil || cur.Version == obj.Version || cur.Err != nil || cur.Head == nil || cur.Head.Key != obj.Head.Key {
		return nil, err
	}
	if ok, err := b.visible(ctx, cur, nil); err != nil || !ok {
		return nil, err
	}
	return cur, nil
}

// getHead reads the head object named name, consistently; nil if there is
// none.
func (b *Backend) getHead(ctx context.Context, ns, name string) (*Object, error) {
	obj, err := b.s.Get(ctx, Ref{Kind: KindHead, Namespace: ns, Name: name}, ReadOptions{})
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	return obj, err
}
