package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/klauspost/compress/zstd"
)

// bombBytes is what every test bomb inflates to.
const bombBytes = 1 << 30

// zeroStream is a zstd stream of a few KiB that inflates to bombBytes zero
// bytes. Compressing a GiB takes most of a second: the bomb tests share one.
var zeroStream = sync.OnceValues(func() ([]byte, error) {
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf, zstd.WithEncoderLevel(zstd.SpeedBestCompression))
	if err != nil {
		return nil, err
	}
	zero := make([]byte, 1<<20)
	for i := 0; i < bombBytes>>20; i++ {
		w.Write(zero)
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
})

// bombStream returns zeroStream's stream, which the caller must not modify.
func bombStream(t *testing.T) []byte {
	t.Helper()
	z, err := zeroStream()
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// bomb returns a zstd frame of a few KiB that inflates to bombBytes zero
// bytes, recording claim as its size.
func bomb(t *testing.T, claim uint64) []byte {
	t.Helper()
	out := binary.AppendUvarint([]byte{frameZstd}, claim)
	return append(out, bombStream(t)...)
}

// A frame that inflates to far more than it records is refused without
// allocating what it inflates to.
func TestDecompressionBombIsBounded(t *testing.T) {
	for name, claim := range map[string]uint64{"small claim": 1000, "huge claim": bombBytes} {
		t.Run(name, func(t *testing.T) {
			frame := bomb(t, claim)
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
	t.Parallel()
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
