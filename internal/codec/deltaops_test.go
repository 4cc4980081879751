package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
)

// edit returns b with a few random edits: lines changed in place, inserted,
// removed, moved; values changed within a line.
func edit(r *rand.Rand, b []byte, edits int) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i := 0; i < edits && len(lines) > 1; i++ {
		j := r.IntN(len(lines))
		switch r.IntN(5) {
		case 0: // a value within the line
			l := bytes.Clone(lines[j])
			if len(l) > 2 {
				l[r.IntN(len(l)-1)] = byte('a' + r.IntN(26))
			}
			lines[j] = l
		case 1:
			lines = append(lines[:j], append([][]byte{[]byte(fmt.Sprintf("  new: %d\n", r.Int()))}, lines[j:]...)...)
		case 2:
			lines = append(lines[:j], lines[j+1:]...)
		case 3: // a block moved
			k := r.IntN(len(lines))
			lines[j], lines[k] = lines[k], lines[j]
		case 4:
			lines[j] = []byte(fmt.Sprintf("changed: %x\n", r.Uint64()))
		}
	}
	return bytes.Join(lines, nil)
}

// Operations rebuild any content from any base, however unrelated.
func TestDeltaOpsRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 8))
	json := []byte(`{"a":{"b":1,"c":[1,2,3],"d":"x,y"},"e":"` + string(bytes.Repeat([]byte("z"), 300)) + `","f":true}`)
	cases := map[string][2][]byte{
		"empty both":       {nil, nil},
		"empty base":       {nil, []byte("a\nb\n")},
		"empty content":    {[]byte("a\nb\n"), nil},
		"same":             {manifest(20<<10, "a", 1), manifest(20<<10, "a", 1)},
		"unrelated":        {manifest(20<<10, "a", 1), bytes.Repeat([]byte{0, 1, 2, 250}, 5000)},
		"no separators":    {bytes.Repeat([]byte("abcdefgh"), 4000), append(bytes.Repeat([]byte("abcdefgh"), 2000), bytes.Repeat([]byte("abcdefgX"), 2000)...)},
		"compact json":     {json, bytes.Replace(json, []byte(`"c":[1,2,3]`), []byte(`"c":[1,2,4]`), 1)},
		"repeated lines":   {bytes.Repeat([]byte("  - a\n"), 3000), bytes.Repeat([]byte("  - a\n"), 2999)},
		"separators only":  {bytes.Repeat([]byte("\n,"), 500), bytes.Repeat([]byte(",\n"), 700)},
		"truncated at end": {manifest(20<<10, "a", 1), manifest(20<<10, "a", 1)[:10000]},
	}
	for i := 0; i < 200; i++ {
		base := manifest(1+r.IntN(40<<10), fmt.Sprint(i), i)
		cases[fmt.Sprintf("random edit %d", i)] = [2][]byte{base, edit(r, base, r.IntN(30))}
	}
	for name, c := range cases {
		base, content := c[0], c[1]
		ops := deltaOps(base, content)
		got, err := applyDeltaOps(ops, base, len(content))
		if err != nil || !bytes.Equal(got, content) {
			t.Fatalf("%s: %v (equal %v)", name, err, bytes.Equal(got, content))
		}
		if len(ops) > maxOpsBytes(uint64(len(content))) {
			t.Fatalf("%s: %d bytes of operations for %d of content, more than the decoder accepts", name, len(ops), len(content))
		}
	}
}

// A values-only upgrade of a large manifest (a few changed lines) and of
// compact JSON values (a few changed members) makes a tiny delta.
func TestDeltaOpsSmallForFewChanges(t *testing.T) {
	t.Parallel()
	base := manifest(230<<10, "v1", 2)
	next := bytes.Replace(base, []byte("name: app-17\n"), []byte("name: app-17b\n"), 1)
	next = bytes.Replace(next, []byte("name: app-200\n"), []byte("name: app-200c\n"), 1)
	if n := len(Compress(deltaOps(base, next))); n > 200 {
		t.Errorf("two changed lines of a 230 KiB manifest: %d bytes of delta, want at most 200", n)
	}
	var vals bytes.Buffer
	vals.WriteString("{")
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&vals, `"key%d":{"enabled":true,"replicas":%d},`, i, i%5)
	}
	vals.WriteString(`"end":1}`)
	v := vals.Bytes()
	v2 := bytes.Replace(v, []byte(`"key1500":{"enabled":true,"replicas":0}`), []byte(`"key1500":{"enabled":false,"replicas":0}`), 1)
	if n := len(Compress(deltaOps(v, v2))); n > 200 {
		t.Errorf("one changed member of %d bytes of compact JSON: %d bytes of delta, want at most 200", len(v), n)
	}
}

// Hostile operations are refused as corrupt, never a panic nor an
// allocation beyond the recorded size.
func TestDeltaOpsHostile(t *testing.T) {
	t.Parallel()
	base := []byte("0123456789abcdef0123456789abcdef")
	rec := func(ins string, rel int64, l uint64) []byte {
		b := binary.AppendUvarint(nil, uint64(len(ins)))
		b = append(b, ins...)
		b = binary.AppendVarint(b, rel)
		return binary.AppendUvarint(b, l)
	}
	cases := map[string]struct {
		ops []byte
		n   int
	}{
		"copy before base":   {rec("", -1, 4), 4},
		"copy past base":     {rec("", 30, 4), 4},
		"copy too long":      {rec("", 0, 33), 33},
		"huge length":        {rec("", 0, 1<<62), 10},
		"huge offset":        {rec("", 1<<62, 1), 1},
		"more than recorded": {rec("ab", 0, 10), 5},
		"less than recorded": {rec("ab", 0, 10), 20},
		"empty record":       {append(rec("", 0, 0), rec("a", 0, 1)...), 2},
		"empty last record":  {append(rec("a", 0, 1), 0), 2},
		"insert past ops":    {[]byte{10, 'a'}, 10},
		"truncated varint":   {[]byte{0x80}, 1},
		"truncated copy":     {[]byte{1, 'a', 0x80}, 2},
	}
	for name, c := range cases {
		if out, err := applyDeltaOps(c.ops, base, c.n); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: got %q, %v; want ErrCorrupt", name, out, err)
		}
	}
	if out, err := applyDeltaOps(append(rec("x", 3, 2), rec("y", -5, 1)...), base, 5); err != nil || string(out) != "x34y0" {
		t.Fatalf("valid relative copies: %q, %v", out, err)
	}
}
