package castest

import (
	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
)

// WireObject is one object of WireObjects, named for the golden string a
// backend's test pins its stored JSON to.
type WireObject struct {
	Name string
	Obj  *cas.Object
}

// WireObjects returns objects of every record kind, with every field set
// and bare, for a backend's test that pins the JSON it stores for each to
// a golden string (by Name) and checks that each reads back as written.
func WireObjects() []WireObject {
	refs := []cas.Referrer{{Kind: cas.KindHead, Name: "h", UID: "u0"}}
	head := &cas.HeadRecord{
		HeadFields: cas.HeadFields{Key: "sh.helm.release.v1.a.v2", Name: "a", Version: 2, Status: "deployed", Owner: "helm",
			CreatedAt: 1700000000001, ModifiedAt: 1700000000002},
		SummaryFields: driver.SummaryFields{ChartName: "c", ChartVersion: "1.0.0", AppVersion: "2.0", HasSummary: true,
			Updated: "u", Description: "d"},
		Parts:      cas.PartDigests{Chart: "c1", Values: "v1", Manifest: "m1", ValuesBase: "vb", ManifestBase: "mb"},
		Embedded:   []cas.EmbeddedFrame{{Digest: "v1", Size: 3, Data: []byte("abc")}, {Digest: "m1", Data: []byte("x")}},
		Body:       []byte("body"),
		BodyChunks: &cas.ChunkSet{ID: "0a0b", Count: 2, Size: 9, Digest: "bd"}}
	return []WireObject{
		{"head", &cas.Object{Kind: cas.KindHead, Namespace: "ns", Name: "sh.helm.release.v1.a.v2", UID: "u1",
			Labels: map[string]string{"name": "a"}, Head: head}},
		{"part", &cas.Object{Kind: cas.KindValues, Namespace: "ns", Name: "v1", UID: "u2", Referrers: refs,
			Part: &cas.PartRecord{Digest: "v1", Size: 9, StoredSize: 8, FrameDigest: "fd", Chunks: 3, Complete: true, Data: []byte("data")}}},
		{"empty part", &cas.Object{Kind: cas.KindChart, Namespace: "ns", Name: "c1", UID: "u3", Part: &cas.PartRecord{Digest: "c1"}}},
		{"chunk", &cas.Object{Kind: cas.KindChunk, Namespace: "ns", Name: "u2--0", UID: "u4", Referrers: refs,
			Chunk: &cas.ChunkRecord{Of: "v1", Index: 1, Data: []byte("chunk")}}},
		{"bare chunk", &cas.Object{Kind: cas.KindChunk, Namespace: "ns", Name: "u2--1", UID: "u6", Chunk: &cas.ChunkRecord{}}},
		{"bare head", &cas.Object{Kind: cas.KindHead, Namespace: "ns", Name: "k", UID: "u5", Head: &cas.HeadRecord{HeadFields: cas.HeadFields{Key: "k"}}}},
	}
}
