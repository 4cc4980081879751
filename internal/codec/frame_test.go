package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// bomb returns a zstd frame of a few KiB that inflates to n zero bytes,
// recording claim as its size.
func bomb(t *testing.T, n int, claim uint64) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		t.Fatal(err)
	}
	zero := make([]byte, 1<<20)
	for i := 0; i < n>>20; i++ {
		w.Write(zero)
	}
	w.Close()
	out := binary.AppendUvarint([]byte{frameZstd}, claim)
	return append(out, buf.Bytes()...)
}

// A frame that inflates to far more than it records is refused without
// allocating what it inflates to.
func TestDecompressionBombIsBounded(t *testing.T) {
	const inflated = 1 << 30
	for name, claim := range map[string]uint64{"small claim": 1000, "huge claim": inflated} {
		t.Run(name, func(t *testing.T) {
			frame := bomb(t, inflated, claim)
			if len(frame) > 1<<20 {
				t.Fatalf("bomb is %d bytes", len(frame))
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := Open(frame, Digest{})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Open(bomb) = %v, want ErrCorrupt", err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Fatalf("decoding the bomb allocated %d MiB", grew>>20)
			}
			body := SealHead(frame, "k", Digest{}, Digest{}, Digest{})
			if _, err := OpenHead(body, "k", Digest{}, Digest{}, Digest{}); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("OpenHead(bomb) = %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestSealedHead(t *testing.T) {
	frame := Compress([]byte(`{"name":"a"}`))
	c, v, m := Sum([]byte("c")), Sum([]byte("v")), Sum([]byte("m"))
	body := SealHead(frame, "k1", c, v, m)
	if raw, err := OpenHead(body, "k1", c, v, m); err != nil || string(raw) != `{"name":"a"}` {
		t.Fatalf("OpenHead = %q, %v", raw, err)
	}
	for name, open := range map[string]func() error{
		"other key":    func() error { _, err := OpenHead(body, "k2", c, v, m); return err },
		"other values": func() error { _, err := OpenHead(body, "k1", c, m, m); return err },
		"no manifest":  func() error { _, err := OpenHead(body, "k1", c, v, Digest{}); return err },
		"unsealed":     func() error { _, err := OpenHead(frame, "k1", c, v, m); return err },
		"flipped": func() error {
			b := bytes.Clone(body)
			b[len(b)-1] ^= 1
			_, err := OpenHead(b, "k1", c, v, m)
			return err
		},
		"truncated": func() error { _, err := OpenHead(body[:20], "k1", c, v, m); return err },
		"empty":     func() error { _, err := OpenHead(nil, "k1", c, v, m); return err },
	} {
		if err := open(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

func TestCheckDepth(t *testing.T) {
	deep := func(n int) []byte { return []byte(strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n)) }
	if err := CheckDepth(deep(MaxJSONDepth)); err != nil {
		t.Fatal(err)
	}
	if err := CheckDepth(deep(MaxJSONDepth + 1)); err == nil {
		t.Fatal("depth over the limit accepted")
	}
	if err := CheckDepth([]byte(`{"a":"` + strings.Repeat(`[{\"`, 20000) + `"}`)); err != nil {
		t.Fatalf("brackets inside a string counted: %v", err)
	}
}
