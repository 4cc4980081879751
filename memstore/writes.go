package memstore

import (
	"context"
	"slices"

	"github.com/helmstore/helmstore/driver"
)

// Create stores h and a reference to each of its parts, writing the parts
// the namespace does not hold yet, atomically; driver.ErrReleaseExists if
// the namespace holds the key.
func (b *memBackend) Create(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	// Every part h references, each once, and an error if the engine did
	// not give one (never record a reference without the bytes).
	add, _, err := driver.DiffParts(nil, h, parts)
	if err != nil {
		return err
	}
	b.compress(h.Namespace, add)
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.heads[h.Namespace][h.Key]; ok {
		return driver.ErrReleaseExists
	}
	s.ref(h.Namespace, add)
	s.putHead(newRecord(h))
	return nil
}

// Update replaces the head stored under h.Namespace and h.Key, keeping its
// CreatedAt, and moves part references from the old head's parts to h's,
// atomically; driver.ErrReleaseNotFound if there is no such head. The last
// writer wins: there is no check that the head is still the one the engine
// read (see driver.ErrConflict).
func (b *memBackend) Update(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	if err := b.check(ctx); err != nil {
		return err
	}
	b.compress(h.Namespace, parts)
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.heads[h.Namespace][h.Key]
	if !ok {
		return driver.ErrReleaseNotFound
	}
	add, drop, err := driver.DiffParts(&old.head, h, parts)
	if err != nil {
		return err
	}
	r := newRecord(h)
	r.head.KeepCreatedAt(&old.head)
	// Add before dropping: a part both heads share is never at zero.
	s.ref(h.Namespace, add)
	for _, p := range driver.Rewrites(h, add, parts) {
		s.heal(h.Namespace, p, 0) // the old head, replaced, counts as h
	}
	s.unref(drop)
	s.putHead(r)
	return nil
}

// Delete removes the head stored under ns and key and drops its part
// references, removing the parts no other head of ns references,
// atomically. It returns the head and the frames of its parts that have
// says the engine lacks, read before anything is removed (PlanDelete).
func (b *memBackend) Delete(ctx context.Context, ns, key string, have func(driver.Digest) bool) (*driver.Head, map[driver.Digest][]byte, error) {
	if err := b.check(ctx); err != nil {
		return nil, nil, err
	}
	s := b.s
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.heads[ns][key]
	if !ok {
		return nil, nil, driver.ErrReleaseNotFound
	}
	h := r.read()
	read, drop := driver.PlanDelete(h, have)
	frames := make(map[driver.Digest][]byte, len(read))
	for _, ref := range read {
		if p, ok := s.parts[ref.Namespace][ref.Digest]; ok {
			frames[ref.Digest] = slices.Clone(p.frame)
		}
	}
	delete(s.heads[ns], key)
	if len(s.heads[ns]) == 0 {
		delete(s.heads, ns)
	}
	s.unref(drop)
	return h, frames, nil
}

// compress computes, before the write locks anything, the frames of the
// parts that ns does not hold: compressing a large part takes milliseconds,
// which no other writer should wait for. (A part stored meanwhile is simply
// not used; one removed meanwhile is compressed under the lock.)
func (b *memBackend) compress(ns string, parts []*driver.Part) {
	b.s.mu.RLock()
	var need []*driver.Part
	for _, p := range parts {
		if _, ok := b.s.parts[ns][p.Digest]; !ok || p.Rewrite {
			need = append(need, p)
		}
	}
	b.s.mu.RUnlock()
	for _, p := range need {
		p.Frame()
	}
}

// putHead stores r; s.mu is held.
func (s *space) putHead(r *record) {
	ns := r.head.Namespace
	if s.heads[ns] == nil {
		s.heads[ns] = map[string]*record{}
	}
	s.heads[ns][r.head.Key] = r
}

// ref adds a reference to each part in ns, storing the parts ns lacks. A
// part marked Rewrite (a read found its copy damaged), or stored without
// its frame (damage the write sees), is healed instead. The head the
// references are for is not stored yet. s.mu is held.
func (s *space) ref(ns string, parts []*driver.Part) {
	if len(parts) > 0 && s.parts[ns] == nil {
		s.parts[ns] = map[driver.Digest]*storedPart{}
	}
	for _, p := range parts {
		sp, ok := s.parts[ns][p.Digest]
		switch {
		case p.Rewrite || ok && len(sp.frame) == 0:
			s.heal(ns, p, 1)
		case ok:
			sp.refs++
		default:
			s.parts[ns][p.Digest] = &storedPart{kind: p.Kind, size: p.Size, frame: slices.Clone(p.Frame()), refs: 1}
		}
	}
}

// heal stores p in ns over its copy (damaged, or gone while heads still
// use it), with as references the heads of ns that use it, plus more (the
// head being written, if not stored yet). s.mu is held.
func (s *space) heal(ns string, p *driver.Part, more int) {
	n := more
	for _, r := range s.heads[ns] {
		if slices.ContainsFunc(r.head.Parts(), func(ref driver.PartRef) bool { return ref.Digest == p.Digest }) {
			n++
		}
	}
	if s.parts[ns] == nil {
		s.parts[ns] = map[driver.Digest]*storedPart{}
	}
	s.parts[ns][p.Digest] = &storedPart{kind: p.Kind, size: p.Size, frame: slices.Clone(p.Frame()), refs: n}
}

// unref drops one reference from each part, removing those left with
// none; s.mu is held.
func (s *space) unref(refs []driver.PartRef) {
	for _, r := range refs {
		sp, ok := s.parts[r.Namespace][r.Digest]
		if !ok {
			continue // removed behind the store's back: nothing to drop
		}
		if sp.refs--; sp.refs <= 0 {
			delete(s.parts[r.Namespace], r.Digest)
			if len(s.parts[r.Namespace]) == 0 {
				delete(s.parts, r.Namespace)
			}
		}
	}
}
