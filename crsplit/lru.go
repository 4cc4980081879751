package crsplit

import (
	"container/list"
	"sync"

	"github.com/helmstore/helmstore/internal/codec"
)

// lru is a bounded map that forgets its least recently used entries. It
// only ever speeds things up: losing an entry costs a request, never
// correctness.
type lru[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	order *list.List // of K, front = most recent
	m     map[K]*list.Element
	vals  map[K]V
}

func newLRU[K comparable, V any](max int) *lru[K, V] {
	return &lru[K, V]{max: max, order: list.New(), m: map[K]*list.Element{}, vals: map[K]V{}}
}

func (c *lru[K, V]) get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[k]
	if ok {
		c.order.MoveToFront(el)
	}
	return c.vals[k], ok
}

func (c *lru[K, V]) put(k K, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.vals[k] = v
	if el, ok := c.m[k]; ok {
		c.order.MoveToFront(el)
		return
	}
	c.m[k] = c.order.PushFront(k)
	for c.order.Len() > c.max {
		el := c.order.Back()
		c.order.Remove(el)
		delete(c.m, el.Value.(K))
		delete(c.vals, el.Value.(K))
	}
}

func (c *lru[K, V]) remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		c.order.Remove(el)
		delete(c.m, k)
		delete(c.vals, k)
	}
}

// partKey names a part in a namespace.
type partKey struct {
	ns string
	d  codec.Digest
}

// knownParts remembers the parts a store has seen stored, to guess which
// request ensurePart tries first.
type knownParts struct{ c *lru[partKey, struct{}] }

func newKnownParts(max int) *knownParts { return &knownParts{newLRU[partKey, struct{}](max)} }

func (k *knownParts) has(ns string, d codec.Digest) bool { _, ok := k.c.get(partKey{ns, d}); return ok }
func (k *knownParts) add(ns string, d codec.Digest)      { k.c.put(partKey{ns, d}, struct{}{}) }
func (k *knownParts) remove(ns string, d codec.Digest)   { k.c.remove(partKey{ns, d}) }

// releaseKey names a release in a namespace.
type releaseKey struct{ ns, key string }

// seenReleases remembers, per release, the Release object as this store
// last read or wrote it (without its record): an Update of a release the
// store has seen writes at once, with that resourceVersion as the
// precondition, instead of reading it again first.
type seenReleases struct {
	c *lru[releaseKey, *releaseObject]
}

func newSeenReleases(max int) *seenReleases {
	return &seenReleases{newLRU[releaseKey, *releaseObject](max)}
}

func (s *seenReleases) get(ns, key string) (*releaseObject, bool) {
	return s.c.get(releaseKey{ns, key})
}

// saw records obj, if its head is written (the caller knows it visible).
func (s *seenReleases) saw(obj *releaseObject) {
	if obj == nil || isHidden(&obj.ObjectMeta) {
		return
	}
	o := *obj
	o.ManagedFields = nil
	o.Spec.Release, o.Spec.Record = nil, nil
	s.c.put(releaseKey{o.Namespace, o.Spec.Key}, &o)
}

func (s *seenReleases) forget(ns, key string) { s.c.remove(releaseKey{ns, key}) }
