package crsplit

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/internal/caswire"
	"github.com/helmstore/helmstore/internal/parallel"
)

// What the tests read and write behind the store's back, on the
// Kubernetes objects themselves.

func decodeRelease(raw []byte) (*releaseObject, error) {
	var obj releaseObject
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%w: Release object: %v", driver.ErrCorrupt, err)
	}
	return &obj, nil
}

func decodePart(raw []byte) (*partObject, error) {
	var obj partObject
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("%w: part object: %v", driver.ErrCorrupt, err)
	}
	return &obj, nil
}

// partChunkNames names the chunks of a part object.
func partChunkNames(obj *partObject) []string {
	names := make([]string, obj.Spec.Chunks)
	for i := range names {
		names[i] = caswire.ChunkName(string(obj.UID), "", i)
	}
	return names
}

// releaseChunkName names chunk i of chunk set id of the Release uid.
func releaseChunkName(uid types.UID, id string, i int) string {
	return caswire.ChunkName(string(uid), id, i)
}

// ownerOf is the ownerReference to the object of kind with metadata m.
func ownerOf(kind string, m *metav1.ObjectMeta) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: m.Name, UID: m.UID}
}

func kindOfResource(res string) string {
	switch res {
	case resCharts:
		return "Chart"
	case resValues:
		return "Values"
	}
	return "Manifest"
}

// partResource returns the resource that stores parts of kind k.
func partResource(k driver.Kind) string {
	res, _ := resource(cas.Kind(caswire.PartKind(k)))
	return res
}

// writeChunks creates the named chunks, owned by owner.
func (b *kubeBackend) writeChunks(ctx context.Context, ns string, owner metav1.OwnerReference, of string, names []string, chunks [][]byte) error {
	return parallel.Run(ctx, len(chunks), 8, func(ctx context.Context, i int) error {
		obj := &chunkObject{
			TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: "Chunk"},
			ObjectMeta: metav1.ObjectMeta{Name: names[i], Namespace: ns, OwnerReferences: []metav1.OwnerReference{owner}},
			Spec:       chunkSpec{Of: of, Index: i, Data: chunks[i]},
		}
		_, err := b.c.createQuiet(ctx, resChunks, ns, names[i], obj)
		if isAlreadyExists(err) {
			return nil
		}
		return err
	})
}

// deleteChunks removes the named chunks; absent ones are fine.
func (b *kubeBackend) deleteChunks(ctx context.Context, ns string, names []string) error {
	return parallel.Run(ctx, len(names), 8, func(ctx context.Context, i int) error {
		err := b.c.delete(ctx, resChunks, ns, names[i], "", "")
		if objectMissing(err, resChunks, names[i]) {
			return nil
		}
		return err
	})
}

// openStore opens crsplit on the cluster rc points at, as a Helm 3 store
// with opts.
func openStore(ctx context.Context, rc *rest.Config, opts ...helm3.Option) (helm3.Store, error) {
	cfg := helm3.NewConfig(Name, "", opts...)
	cfg.RESTClientGetter = rc
	b, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return helm3.New(b, cfg), nil
}
