package cas

import (
	"context"
	"sync"

	"github.com/helmstore/helmstore/driver"
)

// Stats counts the visible heads of ns ("": all namespaces) and the parts,
// in part objects or embedded in those heads (each distinct part of a
// namespace once). HeadBytes is what the store holds for the head objects
// (Object.StoredBytes) plus chunked bodies, less the frames they embed;
// PartBytes the stored frames of the parts (every embedded copy);
// RawPartBytes their canonical size.
func (b *Backend) Stats(ctx context.Context, ns string) (driver.Stats, error) {
	s := driver.Stats{Parts: map[string]int{}}
	var mu sync.Mutex
	type partID struct {
		kind   driver.Kind
		ns, id string
	}
	parts := map[partID]bool{}
	count := func(k driver.Kind, ns, d string, raw int64) {
		if id := (partID{k, ns, d}); !parts[id] {
			parts[id] = true
			s.Parts[k.String()]++
			s.RawPartBytes += raw
		}
	}
	err := b.parallel(ctx, 1+len(driver.Kinds()), func(ctx context.Context, i int) error {
		if i == 0 {
			objs, err := b.s.List(ctx, Selector{Kind: KindHead, Namespace: ns})
			if err != nil {
				return err
			}
			for _, obj := range objs {
				if obj.Err != nil {
					return obj.Err
				}
				if ok, err := b.visible(ctx, obj, nil); err != nil || !ok {
					if err != nil {
						return err
					}
					continue
				}
				mu.Lock()
				s.Releases++
				s.HeadBytes += obj.StoredBytes
				if cs := obj.Head.BodyChunks; cs != nil {
					s.HeadBytes += cs.Size
				}
				for _, e := range obj.Head.Embedded {
					if k, ok := embeddedKind(obj.Head, e.Digest); ok {
						s.HeadBytes -= int64(len(e.Data))
						s.PartBytes += int64(len(e.Data))
						count(k, obj.Namespace, e.Digest, e.Size)
					}
				}
				mu.Unlock()
			}
			return nil
		}
		k := driver.Kinds()[i-1]
		objs, err := b.s.List(ctx, Selector{Kind: partKind(k), Namespace: ns})
		if err != nil {
			return err
		}
		for _, obj := range objs {
			if obj.Err != nil {
				return obj.Err
			}
			if obj.Part == nil {
				continue
			}
			mu.Lock()
			s.PartBytes += obj.Part.StoredSize
			count(k, obj.Namespace, obj.Name, obj.Part.Size)
			mu.Unlock()
		}
		return nil
	})
	return s, err
}
