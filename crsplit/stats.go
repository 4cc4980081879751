package crsplit

import (
	"context"
	"encoding/json"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
)

// Stats counts the visible Releases of ns ("": all namespaces) and the
// Chart, Values and Manifest objects. HeadBytes is the serialized size of
// the Release objects (plus any chunked release records); PartBytes the
// stored frames of the parts; RawPartBytes their canonical size.
func (b *kubeBackend) Stats(ctx context.Context, ns string) (driver.Stats, error) {
	s := driver.Stats{Parts: map[string]int{}}
	var mu sync.Mutex
	err := parallel(ctx, 1+len(codec.Kinds), func(ctx context.Context, i int) error {
		if i == 0 {
			raws, err := b.c.list(ctx, resReleases, ns, metav1.ListOptions{})
			if err != nil {
				return err
			}
			for _, raw := range raws {
				obj, err := decodeRelease(raw)
				if err != nil {
					return err
				}
				if ok, err := b.visible(ctx, obj, nil); err != nil || !ok {
					if err != nil {
						return err
					}
					continue
				}
				mu.Lock()
				s.Releases++
				s.HeadBytes += int64(len(raw))
				if cs := obj.Spec.ReleaseChunks; cs != nil {
					s.HeadBytes += cs.Size
				}
				mu.Unlock()
			}
			return nil
		}
		k := codec.Kinds[i-1]
		raws, err := b.c.list(ctx, partResource(k), ns, metav1.ListOptions{})
		if err != nil {
			return err
		}
		for _, raw := range raws {
			var obj struct {
				Spec struct {
					Size       int64 `json:"size"`
					StoredSize int64 `json:"storedSize"`
				} `json:"spec"`
			}
			if err := json.Unmarshal(raw, &obj); err != nil {
				return err
			}
			mu.Lock()
			s.Parts[k.String()]++
			s.PartBytes += obj.Spec.StoredSize
			s.RawPartBytes += obj.Spec.Size
			mu.Unlock()
		}
		return nil
	})
	return s, err
}
