package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/driver"
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
			h := &driver.Head{Key: "k"}
			h.Seal(frame)
			if _, err := OpenHead(h); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("OpenHead(bomb) = %v, want ErrCorrupt", err)
			}
		})
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
