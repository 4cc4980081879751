package cosmos

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/helmstore/helmstore/cas"
)

// TestItemGoldenJSON pins the JSON of a head, a part and a chunk item, every
// field set, to what the store has written since the first release: items
// already stored must read the same, and what is written must not change
// behind a refactor of the wire types.
func TestItemGoldenJSON(t *testing.T) {
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
			`{"id":"sh.helm.release.v1.a.v2","pk":"h/ns/a","k":"head","ns":"ns","n":"sh.helm.release.v1.a.v2","uid":"u1","cr":0,"l":{"name":"a"},"lkv":["\"name\"=a"],"lk":["name"],"r":[],"ru":[],"h":{"key":"sh.helm.release.v1.a.v2","name":"a","version":2,"status":"deployed","owner":"helm","createdAt":1700000000001,"modifiedAt":1700000000002,"chartName":"c","chartVersion":"1.0.0","appVersion":"2.0","chart":"c1","values":"v1","manifest":"m1","valuesBase":"vb","manifestBase":"mb","body":"Ym9keQ==","embedded":[{"digest":"v1","size":3,"data":"YWJj"},{"digest":"m1","data":"eA=="}],"bodyChunks":{"id":"0a0b","count":2,"size":9,"digest":"bd"}}}`},
		{"part", &cas.Object{Kind: cas.KindValues, Namespace: "ns", Name: "v1", UID: "u2", Referrers: refs,
			Part: &cas.PartRecord{Digest: "v1", Size: 9, StoredSize: 8, FrameDigest: "fd", Chunks: 3, Complete: true, Data: []byte("data")}},
			`{"id":"v1","pk":"p/ns/values/v1","k":"values","ns":"ns","n":"v1","uid":"u2","cr":0,"lkv":[],"lk":[],"r":[{"k":1,"n":"h","u":"u0"}],"ru":["u0"],"p":{"digest":"v1","size":9,"storedSize":8,"frameDigest":"fd","chunks":3,"complete":true,"data":"ZGF0YQ=="}}`},
		{"empty part", &cas.Object{Kind: cas.KindChart, Namespace: "ns", Name: "c1", UID: "u3", Part: &cas.PartRecord{Digest: "c1"}},
			`{"id":"c1","pk":"p/ns/chart/c1","k":"chart","ns":"ns","n":"c1","uid":"u3","cr":0,"lkv":[],"lk":[],"r":[],"ru":[],"p":{"digest":"c1","size":0,"storedSize":0,"complete":false}}`},
		{"chunk", &cas.Object{Kind: cas.KindChunk, Namespace: "ns", Name: "u2--0", UID: "u4", Referrers: refs,
			Chunk: &cas.ChunkRecord{Of: "v1", Index: 1, Data: []byte("chunk")}},
			`{"id":"u2--0","pk":"c/ns/u2","k":"chunk","ns":"ns","n":"u2--0","uid":"u4","cr":0,"lkv":[],"lk":[],"r":[{"k":1,"n":"h","u":"u0"}],"ru":["u0"],"c":{"of":"v1","index":1,"data":"Y2h1bms="}}`},
		{"bare chunk", &cas.Object{Kind: cas.KindChunk, Namespace: "ns", Name: "u2--1", UID: "u6", Chunk: &cas.ChunkRecord{}},
			`{"id":"u2--1","pk":"c/ns/u2","k":"chunk","ns":"ns","n":"u2--1","uid":"u6","cr":0,"lkv":[],"lk":[],"r":[],"ru":[],"c":{"of":"","index":0,"data":null}}`},
		{"bare head", &cas.Object{Kind: cas.KindHead, Namespace: "ns", Name: "k", UID: "u5", Head: &cas.HeadRecord{HeadFields: cas.HeadFields{Key: "k"}}},
			`{"id":"k","pk":"h/ns/k","k":"head","ns":"ns","n":"k","uid":"u5","cr":0,"lkv":[],"lk":[],"r":[],"ru":[],"h":{"key":"k","name":"","version":0,"status":"","owner":""}}`},
	}
	for _, c := range cases {
		got, err := json.Marshal(toItem(c.obj))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != c.want {
			t.Errorf("%s item:\n got %s\nwant %s", c.name, got, c.want)
		}
		back := toItem(c.obj).object(c.obj.Ref(), false)
		if back.Err != nil {
			t.Fatalf("%s item reads back: %v", c.name, back.Err)
		}
		want := *c.obj
		if want.Head != nil {
			// An item keeps no printer columns.
			h := *want.Head
			h.Updated, h.Description = "", ""
			want.Head = &h
		}
		if !reflect.DeepEqual(back.Head, want.Head) || !reflect.DeepEqual(back.Part, want.Part) || !reflect.DeepEqual(back.Chunk, want.Chunk) {
			t.Errorf("%s item reads back as %+v %+v %+v, want %+v %+v %+v", c.name, back.Head, back.Part, back.Chunk, want.Head, want.Part, want.Chunk)
		}
	}
}
