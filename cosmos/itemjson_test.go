package cosmos

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/cas"
)

// TestReadItem checks that readItem, which cuts a large frame out of an
// item's JSON and decodes it apart, reads every item exactly as
// encoding/json does: well-formed items of every kind (the large frames by
// the cut, checked), and items written or damaged so that the cut must not
// apply (an escaped string, a second "data", a "data" label, reference or
// stray field, a head item, bad base64, broken JSON).
func TestReadItem(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	frame := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	big := frame(300 << 10)
	ref := cas.Ref{Kind: cas.KindChunk, Namespace: "ns", Name: "u-0"}
	chunk := toItem(&cas.Object{Kind: cas.KindChunk, Namespace: "ns", Name: "u-0", UID: "u1",
		Referrers: []cas.Referrer{{Kind: cas.KindChart, Name: "d", UID: "u"}}, Chunk: &cas.ChunkRecord{Of: "d", Index: 0, Data: big}})
	part := toItem(&cas.Object{Kind: cas.KindChart, Namespace: "ns", Name: "d", UID: "u2", Labels: map[string]string{"a": "b"},
		Part: &cas.PartRecord{Digest: "d", Size: 9, StoredSize: 8, Complete: true, Data: frame(20 << 10)}})
	small := toItem(&cas.Object{Kind: cas.KindValues, Namespace: "ns", Name: "v", UID: "u3",
		Part: &cas.PartRecord{Digest: "v", Complete: true, Data: frame(100)}})
	head := toItem(&cas.Object{Kind: cas.KindHead, Namespace: "ns", Name: "h", UID: "u4",
		Head: &cas.HeadRecord{HeadFields: cas.HeadFields{Key: "k"}, Body: frame(10 << 10), Embedded: []cas.EmbeddedFrame{{Digest: "e", Data: frame(8 << 10)}}}})
	marshal := func(it *item) []byte {
		b, err := json.Marshal(it)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	edit := func(b []byte, old, new string) []byte {
		if !bytes.Contains(b, []byte(old)) {
			t.Fatalf("fixture: %q not in the item", old)
		}
		return bytes.Replace(b, []byte(old), []byte(new), 1)
	}
	chunk.ETag, part.ETag = `"0a00"`, `"0b00"` // as the server returns them
	chunkJSON := marshal(chunk)
	labelled := *chunk
	labelled.Labels = map[string]string{"data": "QUJD"}
	noData := edit(chunkJSON, `"data":"`, `"other":"`)
	cases := []struct {
		name string
		b    []byte
		cut  bool // the cut must apply
	}{
		{"chunk", chunkJSON, true},
		{"part", marshal(part), true},
		{"small part", marshal(small), false},
		{"head", marshal(head), false},
		{"escaped slash", edit(chunkJSON, "/", `\/`), false},
		{"escape in the frame", edit(chunkJSON, `"data":"`, `"data":"\u0041AAA`), false},
		{"second data", edit(chunkJSON, `"uid":`, `"x":{"data":"QUJD"},"uid":`), false},
		{"data label", marshal(&labelled), false},
		{"data only in a reference", edit(noData, `"u":"u"`, `"u":"u","data":"`+strings.Repeat("QUJD", 2<<10)+`"`), false},
		{"data only in a stray field", edit(noData, `"uid":`, `"data":"`+strings.Repeat("QUJD", 2<<10)+`","uid":`), false},
		{"bad base64", edit(chunkJSON, `"data":"`, `"data":"*`), false},
		{"truncated", chunkJSON[:len(chunkJSON)/2], false},
		{"not JSON after the frame", edit(chunkJSON, `"},"_etag`, `"},,"_etag`), false},
	}
	for _, c := range cases {
		var want item
		wantErr := json.Unmarshal(c.b, &want)
		got, err := readItem(c.b)
		if (err != nil) != (wantErr != nil) {
			t.Errorf("%s: readItem error %v, encoding/json %v", c.name, err, wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(*got, want) {
			t.Errorf("%s: readItem read another item than encoding/json", c.name)
		}
		if _, _, ok := cutFrame(c.b); c.cut && !ok {
			t.Errorf("%s: the frame was not cut out", c.name)
		}
	}
	if obj := decode(ref, chunkJSON, false); obj.Err != nil || !bytes.Equal(obj.Chunk.Data, big) {
		t.Fatalf("chunk decoded wrong: %v", obj.Err)
	}
}

// BenchmarkReadItem decodes a chunk item of 300 KiB of frame (about 400 KB
// of JSON), as readItem does (cut) and as encoding/json alone does (plain).
func BenchmarkReadItem(b *testing.B) {
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(i * 7)
	}
	it := toItem(&cas.Object{Kind: cas.KindChunk, Namespace: "ns", Name: "u-0", UID: "u1", Chunk: &cas.ChunkRecord{Of: "d", Data: data}})
	it.ETag = `"0a00"`
	raw, err := json.Marshal(it)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("cut", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if _, err := readItem(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var it item
			if err := json.Unmarshal(raw, &it); err != nil {
				b.Fatal(err)
			}
		}
	})
}
