package engine

import (
	"container/list"
	"sync"

	"github.com/helmstore/helmstore/internal/codec"
)

// keyframeBytes bounds the canonical bytes the keyframe cache of a store
// holds (independently of the part cache, which may be disabled).
const keyframeBytes = 32 << 20

// Keyframe policy: a values or manifest part is stored as a delta against
// the release's keyframe when the delta frame is at most 1/deltaFraction of
// the full frame; otherwise in full, and it becomes the new keyframe. A
// delta at most 1/deltaSmall of the canonical size is taken without
// compressing the full part to compare.
const (
	deltaFraction = 8
	deltaSmall    = 64
	// minDeltaBytes: parts smaller than this are always stored full (a
	// delta saves next to nothing, and costs a second part to read).
	minDeltaBytes = 1 << 10
)

// keyframeKey names the keyframe of one kind of part of one release.
type keyframeKey struct {
	ns, name string
	kind     codec.Kind
}

// keyframe is the full part the latest revision this store has read or
// written of a release uses (itself, or its delta's base), with its
// canonical bytes (verified: read and checked against the digest, or
// written by this store).
type keyframe struct {
	key     keyframeKey
	version int
	digest  codec.Digest
	raw     []byte

	partOnce sync.Once
	p        *codec.Part
}

// part returns the keyframe as a part, hashed once per keyframe (every
// write of the release's next revisions gives it to the backend beside
// its delta).
func (kf *keyframe) part(kind codec.Kind) *codec.Part {
	kf.partOnce.Do(func() { kf.p = codec.NewPart(kind, kf.raw) })
	return kf.p
}

// keyframes is a bounded, least-recently-used map from release (namespace,
// name) and kind to its keyframe: what a write of the next revision takes a
// delta against, without reading anything from the store. It is only a
// guess: a write supplies the base part with the delta, so the base is
// stored again if it was deleted meanwhile (by another store, or another
// goroutine), and the write never depends on the cache being current.
type keyframes struct {
	mu      sync.Mutex
	max     int64
	size    int64
	order   *list.List // front = most recently used
	entries map[keyframeKey]*list.Element
}

func newKeyframes(max int64) *keyframes {
	return &keyframes{max: max, order: list.New(), entries: map[keyframeKey]*list.Element{}}
}

func (c *keyframes) get(ns, name string, kind codec.Kind) (*keyframe, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[keyframeKey{ns, name, kind}]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(el)
	return el.Value.(*keyframe), true
}

// put records the keyframe of revision version of a release. A read (written
// false) does not replace the keyframe of a later revision; a write always
// does (it is the newest revision as far as this store knows, and a release
// uninstalled and installed again starts over at version 1).
func (c *keyframes) put(ns, name string, kind codec.Kind, version int, digest codec.Digest, raw []byte, written bool) {
	if int64(len(raw)) > c.max/4 || len(raw) > codec.MaxDeltaBytes {
		return
	}
	k := keyframeKey{ns, name, kind}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[k]; ok {
		old := el.Value.(*keyframe)
		if !written && old.version > version {
			return
		}
		c.order.MoveToFront(el)
		if old.digest == digest {
			old.version = version
			return
		}
		c.size += int64(len(raw) - len(old.raw))
		el.Value = &keyframe{key: k, version: version, digest: digest, raw: raw}
	} else {
		c.entries[k] = c.order.PushFront(&keyframe{key: k, version: version, digest: digest, raw: raw})
		c.size += int64(len(raw))
	}
	for c.size > c.max {
		el := c.order.Back()
		kf := el.Value.(*keyframe)
		c.order.Remove(el)
		delete(c.entries, kf.key)
		c.size -= int64(len(kf.raw))
	}
}
