// The outline of a backend: a Backend over your store, registered by name.
package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/enginetmp"
)

func init() {
	helm3.Register("mystore", func(ctx context.Context, cfg *helm3.Config) (helm3.Store, error) {
		// Connect to cfg.ConnectionString here.
		b := &myBackend{heads: map[string]*backend.Head{}, refs: map[backend.Digest]int{}}
		return backend.New(b, cfg), nil
	})
}

type myBackend struct {
	backend.Backend // Parts, Create, Delete, Stats, Close: see memstore
	mu              sync.Mutex
	heads           map[string]*backend.Head // by namespace + "/" + key
	refs            map[backend.Digest]int   // per namespace in a real store
}

func (b *myBackend) Heads(ctx context.Context, q backend.Query) ([]*backend.Head, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []*backend.Head
	for _, h := range b.heads {
		if q.Matches(h) { // a real store selects with its indexes first
			c := *h
			out = append(out, &c)
		}
	}
	backend.SortHeads(out)
	return out, nil
}

// Update is one transaction: replace the head, move part references.
func (b *myBackend) Update(ctx context.Context, h *backend.Head, parts []*backend.Part) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	old, ok := b.heads[h.Namespace+"/"+h.Key]
	if !ok {
		return helm3.ErrReleaseNotFound
	}
	add, drop, err := backend.DiffParts(old, h, parts)
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
	fmt.Println(helm3.Drivers()) // then run drivertest.Run on it in a test
}
