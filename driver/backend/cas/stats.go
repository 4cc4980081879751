package cas

import (
	"context"
	"sync"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
)

// Stats counts the visible heads of ns ("": all namespaces) and the part
// objects. HeadBytes is what the store holds for the head objects
// (Object.StoredBytes) plus chunked bodies; PartBytes the stored frames
// of the parts; RawPartBytes their canonical size.
func (b *Backend) Stats(ctx context.Context, ns string) (driver.Stats, error) {
	s := driver.Stats{Parts: map[string]int{}}
	var mu sync.Mutex
	err := b.parallel(ctx, 1+len(codec.Kinds), func(ctx context.Context, i int) error {
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
				mu.Unlock()
			}
			return nil
		}
		k := codec.Kinds[i-1]
		objs, err := b.s.List(ctx, Selector{Kind: PartKind(k), Namespace: ns})
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
			s.Parts[k.String()]++
			s.PartBytes += obj.Part.StoredSize
			s.RawPartBytes += obj.Part.Size
			mu.Unlock()
		}
		return nil
	})
	return s, err
}
