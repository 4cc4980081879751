package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"
)

// manifest returns a rendered-looking manifest of about size bytes whose
// image tags and replica counts are those given.
func manifest(size int, tag string, replicas int) []byte {
	r := rand.New(rand.NewPCG(1, 2))
	var b strings.Builder
	b.WriteByte(byte(KindManifest))
	b.WriteByte(manifestUTF8)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "---\n# Source: app/templates/deploy%d.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app-%d\nspec:\n  replicas: %d\n  template:\n    spec:\n      containers:\n      - name: c%d\n        image: registry.example/app%d:%s\n        env:\n",
			i, i, replicas, i, i, tag)
		for j := 0; j < 8; j++ {
			fmt.Fprintf(&b, "        - name: VAR_%d_%x\n          value: %q\n", j, r.Uint64(), fmt.Sprint(r.Uint64()))
		}
	}
	return []byte(b.String())
}

func TestDeltaRoundTrip(t *testing.T) {
	t.Parallel()
	base := NewPart(KindManifest, manifest(230<<10, "v1.0.0", 2))
	next := NewPart(KindManifest, manifest(230<<10, "v1.0.1", 3))
	d, err := Delta(next, base)
	if err != nil {
		t.Fatal(err)
	}
	full := len(next.Frame())
	t.Logf("manifest %d bytes: full frame %d bytes, delta %d bytes (1/%d)", next.Size, full, len(d.Frame()), full/len(d.Frame()))
	if len(d.Frame())*30 > full {
		t.Errorf("delta is %d bytes, full frame %d: want at most 1/30", len(d.Frame()), full)
	}
	if d.Digest == next.Digest || d.Digest == base.Digest {
		t.Fatal("delta shares a digest with a full part")
	}
	if d.Digest != DeltaDigest(base.Digest, next.Digest) || d.Base != base.Digest || d.Content != next.Digest || !d.IsDelta() {
		t.Fatalf("delta part fields: %+v", d)
	}
	raw, err := OpenDelta(d.Frame(), d.Digest, base.Digest, base.Raw())
	if err != nil || !bytes.Equal(raw, next.Raw()) {
		t.Fatalf("OpenDelta: %v (equal %v)", err, bytes.Equal(raw, next.Raw()))
	}
	// A delta frame is never read as a full part, nor a full one as a delta.
	if _, err := Open(d.Frame(), d.Digest); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Open(delta) = %v", err)
	}
	if _, err := Decompress(d.Frame()); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Decompress(delta) = %v", err)
	}
	if _, err := OpenDelta(next.Frame(), d.Digest, base.Digest, base.Raw()); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("OpenDelta(full) = %v", err)
	}
	// No delta of a delta, nor across kinds.
	if _, err := Delta(next, d); err == nil {
		t.Fatal("delta against a delta")
	}
	if _, err := Delta(d, base); err == nil {
		t.Fatal("delta of a delta")
	}
	if _, err := Delta(NewPart(KindValues, []byte("v\x01{}")), base); err == nil {
		t.Fatal("delta across kinds")
	}
	// Identical content: a tiny delta, still its own identity.
	same, err := Delta(base, base)
	if err != nil || same.Digest == base.Digest {
		t.Fatalf("delta of the base itself: %v", err)
	}
}

func TestDeltaDamage(t *testing.T) {
	t.Parallel()
	base := NewPart(KindManifest, manifest(64<<10, "a", 1))
	// Another base of the same size (only the bytes a delta copies matter:
	// a base differing only where the delta has its own bytes decodes it
	// right, and the digest says so).
	other := NewPart(KindManifest, append([]byte("m\x01"), bytes.Repeat([]byte("apiVersion: v1\n"), 64<<10/15)...))
	next := NewPart(KindManifest, manifest(64<<10, "c", 2))
	d, err := Delta(next, base)
	if err != nil {
		t.Fatal(err)
	}
	frame := d.Frame()
	flip := func(i int) []byte { f := bytes.Clone(frame); f[i] ^= 0x40; return f }
	cases := map[string]func() ([]byte, error){
		"wrong base bytes": func() ([]byte, error) { return OpenDelta(frame, d.Digest, base.Digest, other.Raw()) },
		"wrong base named": func() ([]byte, error) { return OpenDelta(frame, d.Digest, other.Digest, other.Raw()) },
		"no base bytes":    func() ([]byte, error) { return OpenDelta(frame, d.Digest, base.Digest, nil) },
		"wrong identity":   func() ([]byte, error) { return OpenDelta(frame, next.Digest, base.Digest, base.Raw()) },
		"flipped payload":  func() ([]byte, error) { return OpenDelta(flip(len(frame)-5), d.Digest, base.Digest, base.Raw()) },
		"flipped base":     func() ([]byte, error) { return OpenDelta(flip(3), d.Digest, base.Digest, base.Raw()) },
		"flipped size":     func() ([]byte, error) { return OpenDelta(flip(1+32), d.Digest, base.Digest, base.Raw()) },
		"truncated":        func() ([]byte, error) { return OpenDelta(frame[:len(frame)/2], d.Digest, base.Digest, base.Raw()) },
		"header only":      func() ([]byte, error) { return OpenDelta(frame[:20], d.Digest, base.Digest, base.Raw()) },
		"empty":            func() ([]byte, error) { return OpenDelta(nil, d.Digest, base.Digest, base.Raw()) },
	}
	for name, open := range cases {
		t.Run(name, func(t *testing.T) {
			if raw, err := open(); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("got %d bytes, %v; want ErrCorrupt", len(raw), err)
			}
		})
	}
}

// A delta that inflates to far more than it records, or claims more than
// MaxPartBytes, is refused without allocating what it inflates to.
func TestDeltaBombIsBounded(t *testing.T) {
	base := NewPart(KindManifest, manifest(4<<10, "a", 1))
	ops := bombStream(t)
	for name, claim := range map[string]uint64{"small claim": 1000, "huge claim": 1 << 30} {
		t.Run(name, func(t *testing.T) {
			frame := append([]byte{frameDelta}, base.Digest[:]...)
			frame = binary.AppendUvarint(frame, claim)
			// The operations, as a zstd frame claiming to be as small as
			// a real delta's.
			frame = append(frame, frameZstd)
			frame = binary.AppendUvarint(frame, 200)
			frame = append(frame, ops...)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err := OpenDelta(frame, Digest{1}, base.Digest, base.Raw())
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("OpenDelta(bomb) = %v, want ErrCorrupt", err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Fatalf("decoding the bomb allocated %d MiB", grew>>20)
			}
		})
	}
}

func BenchmarkDelta(b *testing.B) {
	base := NewPart(KindManifest, manifest(230<<10, "v1.0.0", 2))
	next := manifest(230<<10, "v1.0.1", 3)
	b.Run("encode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := Delta(NewPart(KindManifest, next), base); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode-full", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			Compress(next)
		}
	})
	d, _ := Delta(NewPart(KindManifest, next), base)
	b.Run("decode", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := OpenDelta(d.Frame(), d.Digest, base.Digest, base.Raw()); err != nil {
				b.Fatal(err)
			}
		}
	})
	full := Compress(next)
	b.Run("decode-full", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := Decompress(full); err != nil {
				b.Fatal(err)
			}
		}
	})
}
