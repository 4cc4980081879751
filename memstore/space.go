package memstore

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/helmstore/helmstore/driver"
)

// space is what a store holds, in the shape a database would hold it: a
// table of heads by namespace and key, and a table of parts by namespace
// and digest, each part stored once per namespace with the number of heads
// there that reference it. One mutex makes every write atomic for readers
// (a real backend uses a transaction, a server-side script or a batch).
type space struct {
	mu    sync.RWMutex
	heads map[string]map[string]*record            // namespace -> key -> head
	parts map[string]map[driver.Digest]*storedPart // namespace -> digest -> part

	stores int // stores open on the space; guarded by spacesMu
}

func newSpace() *space {
	return &space{heads: map[string]map[string]*record{}, parts: map[string]map[driver.Digest]*storedPart{}}
}

// record is a stored head: a copy of the head the engine wrote, and, for a
// head damaged behind the store's back (see Tamper in the tests), the error
// that reading it gives, as a real store's unparseable row would.
type record struct {
	head   driver.Head
	damage error
}

// storedPart is one part of one namespace.
type storedPart struct {
	kind  driver.Kind
	size  int    // canonical (uncompressed) size, for Stats
	frame []byte // the frame, as the engine gave it
	refs  int    // heads of the namespace that reference it
}

// memBackend is driver.Backend over a space.
type memBackend struct {
	s      *space
	name   string
	closed atomic.Bool
}

var _ driver.Backend = (*memBackend)(nil)

// errClosed is returned by every method of a closed store.
var errClosed = errors.New("memstore: store is closed")

// check fails a call on a closed store or a done context. A real backend
// gets both from its client library.
func (b *memBackend) check(ctx context.Context) error {
	if b.closed.Load() {
		return errClosed
	}
	return ctx.Err()
}

// Close detaches from the space; the space goes when its last store does.
func (b *memBackend) Close() error {
	if b.closed.CompareAndSwap(false, true) {
		b.detach()
	}
	return nil
}

// read returns a copy of the stored head, as a real store returns fresh
// bytes from every read: nothing the engine or its caller does to it can
// change what is stored.
func (r *record) read() *driver.Head {
	h := r.head
	h.Labels = maps.Clone(r.head.Labels)
	h.Body = slices.Clone(r.head.Body)
	if r.damage != nil {
		h.Labels, h.Err = nil, r.damage
	}
	return &h
}

// newRecord copies the head h for storing.
func newRecord(h *driver.Head) *record {
	r := &record{head: *h}
	r.head.Labels = maps.Clone(h.Labels)
	r.head.Body = slices.Clone(h.Body)
	r.head.Err = nil
	return r
}
