package memstore

import (
	"context"
	"slices"

	"github.com/helmstore/helmstore/driver"
)

// Parts returns the frames of the referenced parts that are stored, each
// read from its ref's namespace. A part that is not stored is left out:
// the engine reports the releases that need it.
func (b *memBackend) Parts(ctx context.Context, refs []driver.PartRef) (map[driver.Digest][]byte, error) {
	if err := b.check(ctx); err != nil {
		return nil, err
	}
	b.s.mu.RLock()
	defer b.s.mu.RUnlock()
	out := make(map[driver.Digest][]byte, len(refs))
	for _, r := range refs {
		if p, ok := b.s.parts[r.Namespace][r.Digest]; ok {
			out[r.Digest] = slices.Clone(p.frame)
		}
	}
	return out, nil
}

// Stats counts the heads and parts of ns ("": all namespaces) and their
// sizes.
func (b *memBackend) Stats(ctx context.Context, ns string) (driver.Stats, error) {
	st := driver.Stats{Parts: map[string]int{}}
	if err := b.check(ctx); err != nil {
		return st, err
	}
	b.s.mu.RLock()
	defer b.s.mu.RUnlock()
	for n, heads := range b.s.heads {
		if ns != "" && n != ns {
			continue
		}
		for _, r := range heads {
			st.Releases++
			st.HeadBytes += int64(len(r.head.Body))
			for k, v := range r.head.Labels {
				st.HeadBytes += int64(len(k) + len(v))
			}
		}
	}
	for n, parts := range b.s.parts {
		if ns != "" && n != ns {
			continue
		}
		for _, p := range parts {
			st.Parts[p.kind.String()]++
			st.PartBytes += int64(len(p.frame))
			st.RawPartBytes += int64(p.size)
		}
	}
	return st, nil
}
