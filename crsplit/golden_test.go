package crsplit

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/helmstore/helmstore/internal/testing/castest"
)

// TestObjectGoldenJSON pins the JSON of a Release, a part and a Chunk, every
// field set, to what the backend writes: objects already stored must read
// the same, and what is written must not change behind a refactor of the
// wire types. (Releases gained spec.hasSummary with the summary listing,
// then the annotation helmstore.io/summary, and every object is written
// with managedFields [{}], so that the API server keeps none; objects
// without them read as before.)
func TestObjectGoldenJSON(t *testing.T) {
	want := map[string]string{
		"head":       `{"kind":"Release","apiVersion":"helmstore.io/v1","metadata":{"name":"sh.helm.release.v1.a.v2","namespace":"ns","uid":"u1","labels":{"name":"a"},"annotations":{"helmstore.io/summary":"{\"key\":\"sh.helm.release.v1.a.v2\",\"name\":\"a\",\"version\":2,\"status\":\"deployed\",\"owner\":\"helm\",\"createdAt\":1700000000001,\"modifiedAt\":1700000000002,\"chartName\":\"c\",\"chartVersion\":\"1.0.0\",\"appVersion\":\"2.0\",\"hasSummary\":true,\"updated\":\"u\",\"description\":\"d\"}"},"managedFields":[{}]},"spec":{"key":"sh.helm.release.v1.a.v2","name":"a","version":2,"status":"deployed","owner":"helm","createdAt":1700000000001,"modifiedAt":1700000000002,"chart":"c-1.0.0","chartName":"c","chartVersion":"1.0.0","appVersion":"2.0","hasSummary":true,"updated":"u","description":"d","parts":{"chart":"c1","values":"v1","manifest":"m1","valuesBase":"vb","manifestBase":"mb"},"embedded":[{"digest":"v1","size":3,"data":"YWJj"},{"digest":"m1","data":"eA=="}],"record":"Ym9keQ==","releaseChunks":{"id":"0a0b","count":2,"size":9,"digest":"bd"}}}`,
		"part":       `{"kind":"Values","apiVersion":"helmstore.io/v1","metadata":{"name":"v1","namespace":"ns","uid":"u2","labels":{"helmstore.io/object":"v1"},"ownerReferences":[{"apiVersion":"helmstore.io/v1","kind":"Release","name":"h","uid":"u0"}],"managedFields":[{}]},"spec":{"digest":"v1","size":9,"storedSize":8,"frameDigest":"fd","chunks":3,"complete":true,"data":"ZGF0YQ=="}}`,
		"empty part": `{"kind":"Chart","apiVersion":"helmstore.io/v1","metadata":{"name":"c1","namespace":"ns","uid":"u3","labels":{"helmstore.io/object":"c1"},"managedFields":[{}]},"spec":{"digest":"c1","size":0,"storedSize":0,"complete":false}}`,
		"chunk":      `{"kind":"Chunk","apiVersion":"helmstore.io/v1","metadata":{"name":"u2--0","namespace":"ns","uid":"u4","labels":{"helmstore.io/object":"u2--0"},"ownerReferences":[{"apiVersion":"helmstore.io/v1","kind":"Release","name":"h","uid":"u0"}],"managedFields":[{}]},"spec":{"of":"v1","index":1,"data":"Y2h1bms="}}`,
		"bare chunk": `{"kind":"Chunk","apiVersion":"helmstore.io/v1","metadata":{"name":"u2--1","namespace":"ns","uid":"u6","labels":{"helmstore.io/object":"u2--1"},"managedFields":[{}]},"spec":{"index":0,"data":null}}`,
		"bare head":  `{"kind":"Release","apiVersion":"helmstore.io/v1","metadata":{"name":"k","namespace":"ns","uid":"u5","annotations":{"helmstore.io/summary":"{\"key\":\"k\",\"name\":\"\",\"version\":0,\"status\":\"\",\"owner\":\"\"}"},"managedFields":[{}]},"spec":{"key":"k","name":"","version":0,"status":"","owner":"","parts":{}}}`,
	}
	for _, c := range castest.WireObjects() {
		if _, ok := want[c.Name]; !ok {
			t.Fatalf("no golden JSON for %s", c.Name)
		}
		o, err := encode(c.Obj)
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want[c.Name] {
			t.Errorf("%s object:\n got %s\nwant %s", c.Name, got, want[c.Name])
		}
		back := decode(c.Obj.Kind, got)
		if back.Err != nil {
			t.Fatalf("%s object reads back: %v", c.Name, back.Err)
		}
		if !reflect.DeepEqual(back.Head, c.Obj.Head) || !reflect.DeepEqual(back.Part, c.Obj.Part) || !reflect.DeepEqual(back.Chunk, c.Obj.Chunk) {
			t.Errorf("%s object reads back as %+v %+v %+v, want %+v %+v %+v", c.Name, back.Head, back.Part, back.Chunk, c.Obj.Head, c.Obj.Part, c.Obj.Chunk)
		}
	}
}
