package partcache

import (
	"container/list"
	"sync"
)

// LRU is a bounded map that forgets its least recently used entries, for
// what a backend remembers only to save requests (losing an entry costs a
// request, never correctness). Methods are safe for concurrent use.
type LRU[K comparable, V any] struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *lruEntry, front = most recent
	m     map[K]*list.Element
}

type lruEntry[K comparable, V any] struct {
	k K
	v V
}

// NewLRU returns an LRU holding at most n entries (at least one).
func NewLRU[K comparable, V any](n int) *LRU[K, V] {
	return &LRU[K, V]{max: max(n, 1), order: list.New(), m: map[K]*list.Element{}}
}

// Get returns the value under k, and whether there is one.
func (c *LRU[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		c.order.MoveToFront(el)
		return el.Value.(*lruEntry[K, V]).v, true
	}
	var zero V
	return zero, false
}

// Put sets the value under k.
func (c *LRU[K, V]) Put(k K, v V) {
	c.Update(k, func(V, bool) (V, bool) { return v, true })
}

// Update sets the value under k to what fn returns, given the current one
// (and whether there is one), atomically; fn returning false leaves it as
// it is. fn must not call c.
func (c *LRU[K, V]) Update(k K, fn func(old V, ok bool) (V, bool)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[k]
	var old V
	if ok {
		old = el.Value.(*lruEntry[K, V]).v
	}
	v, set := fn(old, ok)
	if !set {
		return
	}
	if ok {
		el.Value.(*lruEntry[K, V]).v = v
		c.order.MoveToFront(el)
		return
	}
	c.m[k] = c.order.PushFront(&lruEntry[K, V]{k, v})
	for c.order.Len() > c.max {
		el := c.order.Back()
		c.order.Remove(el)
		delete(c.m, el.Value.(*lruEntry[K, V]).k)
	}
}

// Remove forgets k.
func (c *LRU[K, V]) Remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[k]; ok {
		c.order.Remove(el)
		delete(c.m, k)
	}
}
