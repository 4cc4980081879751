package crsplit

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/helmstore/helmstore/cas"
)

// TestObjectGoldenJSON pins the JSON of a Release, a part and a Chunk, every
// field set, to what the backend has written since the first release:
// objects already stored must read the same, and what is written must not
// change behind a refactor of the wire types.
func TestObjectGoldenJSON(t *testing.T) {
	refs := []cas.Referrer{{Kind: cas.KindHead, Name: "h", UID: "u0"}}
	head := &cas.HeadRecord{
		HeadFields: cas.HeadFields{Key: "sh.helm.release.v1.a.v2", Name: "a", Version: 2, Status: "deployed", Owner: "helm",
			CreatedAt: 1700000000001, ModifiedAt: 1700000000002},
		ChartFields: cas.ChartFields{ChartName: "c", ChartVersion: "1.0.0", AppVersion: "2.0"},
		Updated:     "u", Description: "d",
		Parts:      cas.PartDigests{Chart: "c1", Values: "v1", Manifest: "m1", ValuesBase: "vb", ManifestBase: "mb"},
		Embedded:   []cas.EmbeddedFrame{{Digest: "v1", Size: 3, Data: []byte("abc")}, {Digest: "m1", Data: []byte("x")}},
		Body:       []byte("body"),
		BodyChunks: &cas.ChunkSet{ID: "0a0b", Count: 2, Size: 9, Digest: "bd"}}
	cases := []struct {
		name string
		obj  *cas.Object
		want string
	}{
		{"head", &cas.Object{Kind: cas.KindHead, Namespace: "ns", Name: "sh.helm.release.v1.a.v2", UID: "u1",
			Labels: map[string]string{"name": "a"}, Head: head},
			`{"kind":"Release","apiVersion":"helmstore.io/v1","metadata":{"name":"sh.helm.release.v1.a.v2","namespace":"ns","uid":"u1","labels":{"name":"a"}},"spec":{"key":"sh.helm.release.v1.a.v2","name":"a","version":2,"status":"deployed","owner":"helm","createdAt":1700000000001,"modifiedAt":1700000000002,"chart":"c-1.0.0","chartName":"c","chartVersion":"1.0.0","appVersion":"2.0","updated":"u","description":"d","parts":{"chart":"c1","values":"v1","manifest":"m1","valuesBase":"vb","manifestBase":"mb"},"embedded":[{"digest":"v1","size":3,"data":"YWJj"},{"digest":"m1","data":"eA=="}],"record":"Ym9keQ==","releaseChunks":{"id":"0a0b","count":2,"size":9,"digest":"bd"}}}`},
		{"part", &cas.Object{Kind: cas.KindValues, Namespace: "ns", Name: "v1", UID: "u2", Referrers: refs,
			Part: &cas.PartRecord{Digest: "v1", Size: 9, StoredSize: 8, FrameDigest: "fd", Chunks: 3, Complete: true, Data: []byte("data")}},
			`{"kind":"Values","apiVersion":"helmstore.io/v1","metadata":{"name":"v1","namespace":"ns","uid":"u2","labels":{"helmstore.io/object":"v1"},"ownerReferences":[{"apiVersion":"helmstore.io/v1","kind":"Release","name":"h","uid":"u0"}]},"spec":{"digest":"v1","size":9,"storedSize":8,"frameDigest":"fd","chunks":3,"complete":true,"data":"ZGF0YQ=="}}`},
		{"empty part", &cas.Object{Kind: cas.KindChart, Namespace: "ns", Name: "c1", UID: "u3", Part: &cas.PartRecord{Digest: "c1"}},
			`{"kind":"Chart","apiVersion":"helmstore.io/v1","metadata":{"name":"c1","namespace":"ns","uid":"u3","labels":{"helmstore.io/object":"c1"}},"spec":{"digest":"c1","size":0,"storedSize":0,"complete":false}}`},
		{"chunk", &cas.Object{Kind: cas.KindChunk, Namespace: "ns", Name: "u2--0", UID: "u4", Referrers: refs,
			Chunk: &cas.ChunkRecord{Of: "v1", Index: 1, Data: []byte("chunk")}},
			`{"kind":"Chunk","apiVersion":"helmstore.io/v1","metadata":{"name":"u2--0","namespace":"ns","uid":"u4","labels":{"helmstore.io/object":"u2--0"},"ownerReferences":[{"apiVersion":"helmstore.io/v1","kind":"Release","name":"h","uid":"u0"}]},"spec":{"of":"v1","index":1,"data":"Y2h1bms="}}`},
		{"bare chunk", &cas.Object{Kind: cas.KindChunk, Namespace: "ns", Name: "u2--1", UID: "u6", Chunk: &cas.ChunkRecord{}},
			`{"kind":"Chunk","apiVersion":"helmstore.io/v1","metadata":{"name":"u2--1","namespace":"ns","uid":"u6","labels":{"helmstore.io/object":"u2--1"}},"spec":{"index":0,"data":null}}`},
		{"bare head", &cas.Object{Kind: cas.KindHead, Namespace: "ns", Name: "k", UID: "u5", Head: &cas.HeadRecord{HeadFields: cas.HeadFields{Key: "k"}}},
			`{"kind":"Release","apiVersion":"helmstore.io/v1","metadata":{"name":"k","namespace":"ns","uid":"u5"},"spec":{"key":"k","name":"","version":0,"status":"","owner":"","parts":{}}}`},
	}
	for _, c := range cases {
		o, err := encode(c.obj)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s object:\n got %s\nwant %s", c.name, got, c.want)
		}
		back := decode(c.obj.Kind, got)
		if back.Err != nil {
			t.Fatalf("%s object reads back: %v", c.name, back.Err)
		}
		if !reflect.DeepEqual(back.Head, c.obj.Head) || !reflect.DeepEqual(back.Part, c.obj.Part) || !reflect.DeepEqual(back.Chunk, c.obj.Chunk) {
			t.Errorf("%s object reads back as %+v %+v %+v, want %+v %+v %+v", c.name, back.Head, back.Part, back.Chunk, c.obj.Head, c.obj.Part, c.obj.Chunk)
		}
	}
}
