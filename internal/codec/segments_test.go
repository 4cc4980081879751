package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"testing"

	"math/rand/v2"
)

// segmented builds a segmented frame by hand from (claimed size, zstd
// stream) pairs, recording total as the frame's size.
func segmented(total uint64, segs ...[2]interface{}) []byte {
	out := binary.AppendUvarint([]byte{frameSegments}, total)
	out = binary.AppendUvarint(out, uint64(len(segs)))
	for _, s := range segs {
		z := s[1].([]byte)
		out = binary.AppendUvarint(out, s[0].(uint64))
		out = binary.AppendUvarint(out, uint64(len(z)))
		out = append(out, z...)
	}
	return out
}

func TestSegmentedFrame(t *testing.T) {
	t.Parallel()
	// A chart-sized part of text that compresses as a chart does.
	rnd := rand.New(rand.NewPCG(1, 2))
	words := []string{"apiVersion: ", "kind: ", "metadata:\n", "  name: ", "spec:\n", "{{ .Values.", " }}", "\n"}
	var text []byte
	for len(text) < 3*segmentSize+1000 {
		text = append(text, words[rnd.IntN(len(words))]...)
		text = append(text, byte('a'+rnd.IntN(26)))
	}
	s := &Split{Chart: NewPart(KindChart, append([]byte{byte(KindChart)}, text...))}
	raw := s.Chart.Raw()
	frame := s.Chart.Frame()
	if len(raw) < segmentMin || frame[0] != frameSegments {
		t.Fatalf("the stack's chart (%d bytes) is not stored segmented (frame type %d)", len(raw), frame[0])
	}
	got, err := Open(frame, s.Chart.Digest)
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("Open: %d bytes, %v; want the %d raw bytes", len(got), err, len(raw))
	}
	// Sizes at and around the segment boundaries.
	for _, n := range []int{segmentMin, segmentMin + 1, 3*segmentSize - 1, 3 * segmentSize, 5*segmentSize + 7} {
		b := bytes.Repeat([]byte("abcdefghij"), n/10+1)[:n]
		b[n/2] = 'X'
		f := Compress(b)
		if f[0] != frameSegments {
			t.Fatalf("%d bytes: frame type %d", n, f[0])
		}
		if got, err := Decompress(f); err != nil || !bytes.Equal(got, b) {
			t.Fatalf("%d bytes: round trip failed: %v", n, err)
		}
	}

	// Damage: every truncation point in the header and a sample through
	// the streams, and flipped bytes, are errors (ErrCorrupt), never panics.
	for cut := 0; cut < len(frame); cut += 1 + cut/8 {
		if _, err := Open(frame[:cut], s.Chart.Digest); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("frame cut at %d: %v, want ErrCorrupt", cut, err)
		}
	}
	for i := 1; i < len(frame); i += len(frame)/97 + 1 {
		f := bytes.Clone(frame)
		f[i] ^= 0x5a
		if _, err := Open(f, s.Chart.Digest); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d flipped: %v, want ErrCorrupt", i, err)
		}
	}
	a := encoder().EncodeAll([]byte("aaaa"), nil)
	for name, f := range map[string][]byte{
		"no segments":              segmented(4),
		"segments short of total":  segmented(8, [2]interface{}{uint64(4), a}),
		"segments over total":      segmented(2, [2]interface{}{uint64(4), a}),
		"segment claims less":      segmented(3, [2]interface{}{uint64(3), a}),
		"segment claims more":      segmented(5, [2]interface{}{uint64(5), a}),
		"zero-size segment":        segmented(4, [2]interface{}{uint64(0), []byte{}}, [2]interface{}{uint64(4), a}),
		"trailing bytes":           append(segmented(4, [2]interface{}{uint64(4), a}), 0),
		"count larger than bytes":  binary.AppendUvarint(binary.AppendUvarint([]byte{frameSegments}, 1<<20), 1<<19),
		"stream length past frame": segmented(4, [2]interface{}{uint64(4), a})[:6],
	} {
		if _, err := Decompress(f); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	if got, err := Decompress(segmented(4, [2]interface{}{uint64(4), a})); err != nil || string(got) != "aaaa" {
		t.Fatalf("hand-built frame: %q, %v", got, err)
	}
}

// A segment that inflates to far more than it records is refused without
// allocating what it inflates to.
func TestSegmentBombIsBounded(t *testing.T) {
	stream := bombStream(t)
	// A claim of the whole limit lets the decoder use its own buffers as it
	// does for a one-stream frame claiming as much (about 2.25 times the
	// limit, measured); a small claim keeps it small.
	for name, c := range map[string]struct {
		f     []byte
		bound uint64
	}{
		"small claim": {segmented(2000, [2]interface{}{uint64(1000), stream}, [2]interface{}{uint64(1000), stream}), 64 << 20},
		"huge claim":  {segmented(MaxPartBytes, [2]interface{}{uint64(MaxPartBytes), stream}), MaxPartBytes * 5 / 2},
	} {
		f := c.f
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := Decompress(f)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("%s: %v, want ErrCorrupt", name, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > c.bound {
			t.Fatalf("%s: decoding the bomb allocated %d MiB", name, grew>>20)
		}
	}
}
