package crsplit

import (
	"container/list"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/types"

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
//
// An entry never goes back in time: reads running concurrently with writes
// of the same store finish in any order, and a read that fetched an older
// version and finishes last must not replace the newer one (Update would
// then use an outdated precondition and fail with a false conflict). Of two
// versions, the one with the larger resourceVersion is kept; etcd's are
// revisions of the whole store, comparable across objects, so this also
// orders a Release deleted and created again. A forgotten entry keeps the
// version it forgot, so that a read of that version or an older one
// finishing afterwards is not taken for news.
type seenReleases struct {
	mu sync.Mutex // makes compare-and-put atomic
	c  *lru[releaseKey, seenEntry]
}

// seenEntry is a release as last seen; obj is nil once forgotten.
type seenEntry struct {
	obj *releaseObject
	uid types.UID
	rv  string
}

func newSeenReleases(max int) *seenReleases {
	return &seenReleases{c: newLRU[releaseKey, seenEntry](max)}
}

func (s *seenReleases) get(ns, key string) (*releaseObject, bool) {
	e, ok := s.c.get(releaseKey{ns, key})
	if !ok || e.obj == nil {
		return nil, false
	}
	return e.obj, true
}

// newer reports whether the version (uid, rv) is newer than what e holds.
// ResourceVersions that are not numbers (an API server not backed by
// etcd) cannot be ordered: any other version counts as newer, as before.
func (e seenEntry) newer(uid types.UID, rv string) bool {
	a, aerr := strconv.ParseUint(rv, 10, 64)
	b, berr := strconv.ParseUint(e.rv, 10, 64)
	if aerr != nil || berr != nil {
		return uid != e.uid || rv != e.rv
	}
	return a > b
}

// saw records obj, if its head is written (the caller knows it visible)
// and it is newer than the version already recorded.
func (s *seenReleases) saw(obj *releaseObject) {
	if obj == nil || isHidden(&obj.ObjectMeta) {
		return
	}
	o := *obj
	o.ManagedFields = nil
	o.Spec.Release, o.Spec.Record = nil, nil
	k := releaseKey{o.Namespace, o.Spec.Key}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.c.get(k); ok && !e.newer(o.UID, o.ResourceVersion) {
		return
	}
	s.c.put(k, seenEntry{obj: &o, uid: o.UID, rv: o.ResourceVersion})
}

// seenAt reports whether the store has seen the Release at cur's version
// or a later one (cur is not newer than what it recorded).
func (s *seenReleases) seenAt(cur *releaseObject) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.c.get(releaseKey{cur.Namespace, cur.Spec.Key})
	return ok && e.obj != nil && e.uid == cur.UID && !e.newer(cur.UID, cur.ResourceVersion)
}

// forget drops the release, known to be gone or changed since the version
// (uid, rv) the store saw; reads of that version or older finishing later
// are ignored.
func (s *seenReleases) forget(ns, key string, uid types.UID, rv string) {
	k := releaseKey{ns, key}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.c.get(k); ok && e.obj != nil && (seenEntry{uid: uid, rv: rv}).newer(e.uid, e.rv) {
		return // a newer version is recorded already: keep it
	}
	s.c.put(k, seenEntry{uid: uid, rv: rv})
}
