package cas

import "github.com/helmstore/helmstore/internal/partcache"

// seenHeads remembers, per release, the head object as this store last read
// or wrote it (without its body): an Update of a release the store has
// seen writes at once, with that version as its precondition, instead of
// reading it first. It is only a guess: a version that is no longer
// current costs the Update a read and a second write, never correctness.
type seenHeads struct {
	c *partcache.LRU[releaseKey, *Object]
}

func newSeenHeads(n int) *seenHeads { return &seenHeads{partcache.NewLRU[releaseKey, *Object](n)} }

func (s *seenHeads) get(ns, key string) (*Object, bool) {
	obj, ok := s.c.Get(releaseKey{ns, key})
	return obj, ok && obj != nil
}

// saw records obj, a head object read or written whole (not hidden).
func (s *seenHeads) saw(obj *Object) {
	if obj == nil || obj.Err != nil || obj.Head == nil || isHidden(obj) {
		return
	}
	o := *obj
	rec := *obj.Head
	rec.Body = nil
	o.Head = &rec
	s.c.Put(releaseKey{o.Namespace, rec.Key}, &o)
}

// forget drops the release if what is recorded is the version given (the
// store found it gone or changed since).
func (s *seenHeads) forget(ns, key, version string) {
	s.c.Update(releaseKey{ns, key}, func(old *Object, ok bool) (*Object, bool) {
		if ok && old != nil && old.Version == version {
			return nil, true
		}
		return old, false
	})
}
