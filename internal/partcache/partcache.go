// Package partcache is a bounded, least-recently-used cache of decoded parts
// keyed by digest. Parts are immutable, so an entry never goes stale; the
// cache only has to bound its memory.
package partcache

import (
	"container/list"
	"sync"

	"github.com/helmstore/helmstore/internal/codec"
)

// Cache holds decoded parts up to a total canonical size. The zero value and
// a nil *Cache are valid, empty caches that keep nothing.
type Cache struct {
	mu      sync.Mutex
	max     int64
	size    int64
	order   *list.List // front = most recently used
	entries map[codec.Digest]*list.Element

	hits, misses int64
}

type entry struct {
	digest codec.Digest
	part   *codec.Decoded
}

// New returns a cache holding at most maxBytes of canonical part bytes.
// maxBytes <= 0 returns nil: a cache that keeps nothing.
func New(maxBytes int64) *Cache {
	if maxBytes <= 0 {
		return nil
	}
	return &Cache{max: maxBytes, order: list.New(), entries: map[codec.Digest]*list.Element{}}
}

// Empty reports whether the cache holds nothing (always, for one that keeps
// nothing).
func (c *Cache) Empty() bool {
	if c == nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries) == 0
}

// Get returns the part with digest d, if cached.
func (c *Cache) Get(d codec.Digest) (*codec.Decoded, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[d]; ok {
		c.order.MoveToFront(el)
		c.hits++
		return el.Value.(*entry).part, true
	}
	c.misses++
	return nil, false
}

// Put caches p under d and reports whether the cache now holds p itself
// (not when it already held another copy under d, nor when p is larger
// than the whole cache): a part Put did not keep is still the caller's
// alone.
func (c *Cache) Put(d codec.Digest, p *codec.Decoded) bool {
	if c == nil || int64(p.Size) > c.max {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[d]; ok {
		c.order.MoveToFront(el)
		return false
	}
	c.entries[d] = c.order.PushFront(&entry{digest: d, part: p})
	c.size += int64(p.Size)
	for c.size > c.max {
		el := c.order.Back()
		e := el.Value.(*entry)
		c.order.Remove(el)
		delete(c.entries, e.digest)
		c.size -= int64(e.part.Size)
	}
	return true
}

// Stats reports the cache's size in bytes and entries, and its hit counts.
func (c *Cache) Stats() (bytes int64, entries int, hits, misses int64) {
	if c == nil {
		return 0, 0, 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.size, len(c.entries), c.hits, c.misses
}
