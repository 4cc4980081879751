package cosmos

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/helmstore/helmstore/internal/testing/castest"
)

// TestItemGoldenJSON pins the JSON of a head, a part and a chunk item, every
// field set, to what the store writes: items already stored must read the
// same, and what is written must not change behind a refactor of the wire
// types. (Head items gained hasSummary, updated and description with the
// summary listing; items without them read as before.)
func TestItemGoldenJSON(t *testing.T) {
	want := map[string]string{
		"head":       `{"id":"sh.helm.release.v1.a.v2","pk":"h/ns/a","k":"head","ns":"ns","n":"sh.helm.release.v1.a.v2","uid":"u1","cr":0,"l":{"name":"a"},"lkv":["\"name\"=a"],"lk":["name"],"r":[],"ru":[],"h":{"key":"sh.helm.release.v1.a.v2","name":"a","version":2,"status":"deployed","owner":"helm","createdAt":1700000000001,"modifiedAt":1700000000002,"chartName":"c","chartVersion":"1.0.0","appVersion":"2.0","hasSummary":true,"updated":"u","description":"d","chart":"c1","values":"v1","manifest":"m1","valuesBase":"vb","manifestBase":"mb","body":"Ym9keQ==","embedded":[{"digest":"v1","size":3,"data":"YWJj"},{"digest":"m1","data":"eA=="}],"bodyChunks":{"id":"0a0b","count":2,"size":9,"digest":"bd"}}}`,
		"part":       `{"id":"v1","pk":"p/ns/values/v1","k":"values","ns":"ns","n":"v1","uid":"u2","cr":0,"lkv":[],"lk":[],"r":[{"k":1,"n":"h","u":"u0"}],"ru":["u0"],"p":{"digest":"v1","size":9,"storedSize":8,"frameDigest":"fd","chunks":3,"complete":true,"data":"ZGF0YQ=="}}`,
		"empty part": `{"id":"c1","pk":"p/ns/chart/c1","k":"chart","ns":"ns","n":"c1","uid":"u3","cr":0,"lkv":[],"lk":[],"r":[],"ru":[],"p":{"digest":"c1","size":0,"storedSize":0,"complete":false}}`,
		"chunk":      `{"id":"u2--0","pk":"c/ns/u2","k":"chunk","ns":"ns","n":"u2--0","uid":"u4","cr":0,"lkv":[],"lk":[],"r":[{"k":1,"n":"h","u":"u0"}],"ru":["u0"],"c":{"of":"v1","index":1,"data":"Y2h1bms="}}`,
		"bare chunk": `{"id":"u2--1","pk":"c/ns/u2","k":"chunk","ns":"ns","n":"u2--1","uid":"u6","cr":0,"lkv":[],"lk":[],"r":[],"ru":[],"c":{"of":"","index":0,"data":null}}`,
		"bare head":  `{"id":"k","pk":"h/ns/k","k":"head","ns":"ns","n":"k","uid":"u5","cr":0,"lkv":[],"lk":[],"r":[],"ru":[],"h":{"key":"k","name":"","version":0,"status":"","owner":""}}`,
	}
	for _, c := range castest.WireObjects() {
		if _, ok := want[c.Name]; !ok {
			t.Fatalf("no golden JSON for %s", c.Name)
		}
		got, err := json.Marshal(toItem(c.Obj))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want[c.Name] {
			t.Errorf("%s item:\n got %s\nwant %s", c.Name, got, want[c.Name])
		}
		back := toItem(c.Obj).object(c.Obj.Ref(), false)
		if back.Err != nil {
			t.Fatalf("%s item reads back: %v", c.Name, back.Err)
		}
		written := *c.Obj
		if !reflect.DeepEqual(back.Head, written.Head) || !reflect.DeepEqual(back.Part, written.Part) || !reflect.DeepEqual(back.Chunk, written.Chunk) {
			t.Errorf("%s item reads back as %+v %+v %+v, want %+v %+v %+v", c.Name, back.Head, back.Part, back.Chunk, written.Head, written.Part, written.Chunk)
		}
	}
}
