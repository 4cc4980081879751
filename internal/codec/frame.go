package codec

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/helmstore/helmstore/driver"
)

// Frame type byte values (the first byte of every stored frame).
const (
	frameRaw    byte = 0 // the bytes as they are
	frameZstd   byte = 1 // uvarint(raw length), then one zstd stream
	frameSealed byte = 2 // a head body (driver.Head.Seal): 32-byte seal, then a raw or zstd frame
	frameDelta  byte = 3 // a delta part (delta.go): base digest, uvarint(raw length), zstd with the base as dictionary
	// frameSegments (4, segments.go): independent zstd streams, for parts of segmentMin or more
)

// Size limits, enforced when a release is written and again on every read,
// so stored bytes can never make a reader allocate more: a frame that claims
// or inflates to more than its limit is corrupt (a decompression bomb).
const (
	// MaxPartBytes bounds one part (chart, values or manifest) uncompressed
	// (driver.MaxPartBytes).
	MaxPartBytes = driver.MaxPartBytes
	// MaxHeadBytes bounds a release's head uncompressed (driver.MaxHeadBytes).
	MaxHeadBytes = driver.MaxHeadBytes
	// MaxJSONDepth is the deepest nesting of JSON that Go (and so Helm) can
	// decode; a release nested deeper is refused on write.
	MaxJSONDepth = 10000
)

// sealSize is the length of a head body's seal (driver.Head.Seal).
const sealSize = sha256.Size

// minCompress is the size below which compressing is not worth a zstd header.
const minCompress = 256

var (
	encOnce sync.Once
	enc     *zstd.Encoder
	decOnce sync.Once
	dec     *zstd.Decoder
)

func encoder() *zstd.Encoder {
	encOnce.Do(func() {
		// EncodeAll is safe for concurrent use; SpeedDefault keeps a
		// good ratio at several hundred MB/s.
		e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		if err != nil {
			panic(err)
		}
		enc = e
	})
	return enc
}

func decoder() *zstd.Decoder {
	decOnce.Do(func() {
		// DecodeAll never writes past the capacity of the buffer it is
		// given, which is the size recorded in the frame: stored bytes
		// cannot make it allocate more than that.
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0),
			zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxMemory(MaxPartBytes+1<<20))
		if err != nil {
			panic(err)
		}
		dec = d
	})
	return dec
}

// Compress returns the stored frame for raw: zstd when that is smaller,
// otherwise the bytes as they are.
func Compress(raw []byte) []byte {
	if len(raw) >= segmentMin {
		return compressSegments(raw)
	}
	if len(raw) >= minCompress {
		out := make([]byte, 1, len(raw)/4+64)
		out[0] = frameZstd
		out = binary.AppendUvarint(out, uint64(len(raw)))
		out = encoder().EncodeAll(raw, out)
		if len(out) < len(raw)+1 {
			return out
		}
	}
	out := make([]byte, len(raw)+1)
	out[0] = frameRaw
	copy(out[1:], raw)
	return out
}

// Decompress returns the raw bytes held in frame (of a sealed head body, the
// bytes inside the seal, unchecked), refusing more than MaxPartBytes.
func Decompress(frame []byte) ([]byte, error) {
	if len(frame) > 0 && frame[0] == frameSealed {
		if len(frame) < 1+sealSize {
			return nil, fmt.Errorf("%w: truncated head", ErrCorrupt)
		}
		frame = frame[1+sealSize:]
	}
	return decompress(frame, MaxPartBytes)
}

// decompress returns the raw bytes held in frame, refusing more than limit.
func decompress(frame []byte, limit int) ([]byte, error) {
	if len(frame) == 0 {
		return nil, fmt.Errorf("%w: empty frame", ErrCorrupt)
	}
	switch frame[0] {
	case frameRaw:
		if len(frame)-1 > limit {
			return nil, fmt.Errorf("%w: %d bytes, more than the limit of %d", ErrCorrupt, len(frame)-1, limit)
		}
		return frame[1:], nil
	case frameZstd:
		n, k := binary.Uvarint(frame[1:])
		if k <= 0 {
			return nil, fmt.Errorf("%w: frame size", ErrCorrupt)
		}
		if n > uint64(limit) {
			return nil, fmt.Errorf("%w: frame claims %d bytes, more than the limit of %d", ErrCorrupt, n, limit)
		}
		// One byte of room past the recorded size, so that a stream that
		// inflates to more than it claims is seen (and stopped) as such.
		raw, err := decoder().DecodeAll(frame[1+k:], make([]byte, 0, int(n)+1))
		if err != nil {
			return nil, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
		}
		if uint64(len(raw)) != n {
			return nil, fmt.Errorf("%w: frame inflates to more or less than the %d bytes it records", ErrCorrupt, n)
		}
		return raw, nil
	case frameSegments:
		return decompressSegments(frame[1:], limit)
	case frameDelta:
		return nil, fmt.Errorf("%w: a delta part where a full one is expected", ErrCorrupt)
	default:
		return nil, fmt.Errorf("%w: unknown frame type %d", ErrCorrupt, frame[0])
	}
}

// Open decompresses a part's frame and checks that its bytes hash to want.
func Open(frame []byte, want Digest) ([]byte, error) {
	raw, err := decompress(frame, MaxPartBytes)
	if err != nil {
		return nil, err
	}
	if got := Sum(raw); got != want {
		return nil, fmt.Errorf("%w: digest is %s, want %s", ErrCorrupt, got.Short(), want.Short())
	}
	return raw, nil
}

// OpenHead checks the seal of h's body against its key and part digests
// (driver.Head.Unseal) and returns the head's JSON (at most MaxHeadBytes).
func OpenHead(h *driver.Head) ([]byte, error) {
	inner, err := h.Unseal()
	if err != nil {
		return nil, err
	}
	if kek, ok := EncryptedBy(inner); ok {
		return nil, fmt.Errorf("%w: the release is encrypted at rest (key %s), and this store was opened without encryption keys", driver.ErrKeyUnavailable, kek)
	}
	raw, err := decompress(inner, MaxHeadBytes)
	if err != nil {
		return nil, fmt.Errorf("head: %w", err)
	}
	return raw, nil
}

// CheckDepth returns an error when the JSON in b nests deeper than
// MaxJSONDepth, which Go's decoder (and so Helm) cannot read back.
func CheckDepth(b []byte) error {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > MaxJSONDepth {
				return fmt.Errorf("nested deeper than %d levels, which Helm cannot read back", MaxJSONDepth)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}
