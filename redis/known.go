package redis

import (
	"sync"

	"github.com/helmstore/helmstore/driver"
)

// knownParts remembers, boundedly, parts this store has seen stored. It is a
// guess only: a write sends the frames of parts not in it, and the write
// script refuses (writing nothing) a part that is neither stored nor sent,
// so a wrong guess costs one more round trip, never a missing part.
type knownParts struct {
	mu  sync.Mutex
	max int
	m   map[partID]struct{}
}

type partID struct {
	ns string
	d  driver.Digest
}

func newKnownParts(max int) *knownParts {
	return &knownParts{max: max, m: map[partID]struct{}{}}
}

func (k *knownParts) has(ns string, d driver.Digest) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.m[partID{ns, d}]
	return ok
}

func (k *knownParts) add(ns string, d driver.Digest) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.m) >= k.max {
		for id := range k.m { // drop an arbitrary one
			delete(k.m, id)
			break
		}
	}
	k.m[partID{ns, d}] = struct{}{}
}

func (k *knownParts) forget(ns string, d driver.Digest) {
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, partID{ns, d})
}
