package partcache

import (
	"testing"

	"github.com/helmstore/helmstore/internal/codec"
)

func part(n int) *codec.Decoded { return &codec.Decoded{Kind: codec.KindManifest, Size: n} }

func TestEvictsLeastRecentlyUsedWithinBound(t *testing.T) {
	c := New(100)
	d := func(i byte) codec.Digest { return codec.Digest{i} }
	c.Put(d(1), part(40))
	c.Put(d(2), part(40))
	if _, ok := c.Get(d(1)); !ok { // 1 is now the most recent
		t.Fatal("1 missing")
	}
	c.Put(d(3), part(40)) // over the bound: 2, the least recent, goes
	if _, ok := c.Get(d(2)); ok {
		t.Fatal("the least recently used part was kept")
	}
	for _, i := range []byte{1, 3} {
		if _, ok := c.Get(d(i)); !ok {
			t.Fatalf("%d was evicted", i)
		}
	}
	if size, n, _, _ := c.Stats(); size != 80 || n != 2 {
		t.Fatalf("size %d, entries %d", size, n)
	}
	c.Put(d(4), part(101)) // larger than the whole cache: not kept
	if _, ok := c.Get(d(4)); ok {
		t.Fatal("a part larger than the cache was kept")
	}
}

func TestDisabledCacheKeepsNothing(t *testing.T) {
	c := New(0)
	c.Put(codec.Digest{1}, part(1))
	if _, ok := c.Get(codec.Digest{1}); ok || c != nil {
		t.Fatal("a disabled cache kept a part")
	}
}
