// The outline of a backend: a Backend over your store, registered by name.
package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/helmstore/helmstore/driver"
)

func init() {
	driver.Register("mystore", func(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
		// Connect to cfg.ConnectionString here.
		return &myBackend{heads: map[string]*driver.Head{}, refs: map[driver.Digest]int{}}, nil
	})
}

type myBackend struct {
	driver.Backend // Parts, Create, Delete, Stats, Close: see memstore
	mu             sync.Mutex
	heads          map[string]*driver.Head // by namespace + "/" + key
	refs           map[driver.Digest]int   // per namespace in a real store
}

func (b *myBackend) Heads(ctx context.Context, q driver.Query) ([]*driver.Head, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*driver.Head
	for _, h := range b.heads {
		if q.Matches(h) { // a real store selects with its indexes first
			c := *h
			out = append(out, &c)
		}
	}
	driver.SortHeads(out)
	return out, nil
}

// Update is one transaction: replace the head, move part references.
func (b *myBackend) Update(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	old, ok := b.heads[h.Namespace+"/"+h.Key]
	if !ok {
		return driver.ErrReleaseNotFound
	}
	add, drop, err := driver.DiffParts(old, h, parts)
	if err != nil {
		return err
	}
	h.KeepCreatedAt(old)
	for _, p := range add {
		b.refs[p.Digest]++ // at 1: store p.Frame() under p.Digest
	}
	for _, r := range drop {
		b.refs[r.Digest]-- // at 0: remove the part
	}
	b.heads[h.Namespace+"/"+h.Key] = h
	return nil
}

func main() {
	fmt.Println(driver.Drivers()) // then run drivertest.Run on it in a test
}
