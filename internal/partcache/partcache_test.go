package partcache

import (
	"testing"

	"github.com/helmstore/helmstore/internal/codec"
)

func part(n int) *codec.Decoded { return &codec.Decoded{Kind: codec.KindManifest, Size: n} }

func TestEvictsLeastRecentlyUsedWithinBound(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	c := New(0)
	c.Put(codec.Digest{1}, part(1))
	if _, ok := c.Get(codec.Digest{1}); ok || c != nil {
		t.Fatal("a disabled cache kept a part")
	}
}

func TestLRU(t *testing.T) {
	t.Parallel()
	c := NewLRU[string, int](2)
	c.Put("a", 1)
	c.Put("b", 2)
	if v, ok := c.Get("a"); !ok || v != 1 { // a is now the most recent
		t.Fatalf("a = %d, %v", v, ok)
	}
	c.Put("c", 3) // evicts b
	if _, ok := c.Get("b"); ok {
		t.Fatal("b kept beyond the bound")
	}
	c.Update("a", func(old int, ok bool) (int, bool) { return old + 10, ok })
	c.Update("z", func(old int, ok bool) (int, bool) { return 1, ok }) // absent: not set
	if v, _ := c.Get("a"); v != 11 {
		t.Fatalf("a = %d after Update, want 11", v)
	}
	if _, ok := c.Get("z"); ok {
		t.Fatal("Update set an absent key although fn said not to")
	}
	c.Remove("a")
	if _, ok := c.Get("a"); ok {
		t.Fatal("a still there after Remove")
	}
	if v, ok := c.Get("c"); !ok || v != 3 {
		t.Fatalf("c = %d, %v", v, ok)
	}
}
