package engine

import (
	"fmt"
	"sync"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
)

// Delete removes the release stored under key and returns it. A release
// whose stored data is corrupt is removed all the same; the error then wraps
// driver.ErrCorrupt and says so, and the release returned holds only what the
// store's head says (name, namespace, version, status).
func (v *View[R]) Delete(key string) (*R, error) {
	ctx, cancel := v.ctx()
	defer cancel()
	if err := v.checkRead(key); err != nil {
		return nil, v.fail("delete", v.ns, key, err)
	}
	ns := v.ns
	if ns == "" {
		h, err := v.find(ctx, key, false)
		if err != nil {
			return nil, v.fail("delete", ns, key, err)
		}
		ns = h.Namespace
	}
	// A part the backend is told the engine holds is taken from the cache
	// there and then, into ps: other calls may push it out of the cache
	// before the release is assembled, and the backend did not send its
	// frame. (have may be called from several goroutines.)
	ps := newPartSet()
	var pinMu sync.Mutex
	have := func(d codec.Digest) bool {
		p, ok := v.e.cache.Get(d)
		if ok {
			pinMu.Lock()
			ps.got[d] = p
			pinMu.Unlock()
		}
		return ok
	}
	h, frames, err := v.e.backend.Delete(ctx, ns, key, have)
	if err != nil {
		return nil, v.fail("delete", ns, key, err)
	}
	var refs []driver.PartRef
	if h.Err == nil {
		refs = v.e.needed(h, ps)
	}
	for d, f := range h.Frames {
		frames = withFrame(frames, d, f)
	}
	v.e.decodeRound(refs, frames, ps, false)
	rls, err := v.e.assemble(h, ps, h.Labels)
	if err != nil {
		v.e.cfg.Log("helmstore: deleted release %q in namespace %q whose stored data is corrupt: %v", key, ns, err)
		return v.e.stub(h, key), v.fail("delete", ns, key, fmt.Errorf("release was deleted, but its stored data is corrupt and cannot be returned: %w", err))
	}
	return rls, nil
}

// stub is what the head of a release says about it, for a release whose
// stored data cannot be decoded.
func (e *Engine[R]) stub(h *driver.Head, key string) *R {
	name, version, _ := driver.ParseKey(key)
	return e.codec.Stub(name, version, h.Namespace, h.Status)
}
