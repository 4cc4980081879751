package codec

import (
	"errors"
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// Frame compression byte values.
const (
	frameRaw  byte = 0
	frameZstd byte = 1
)

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
		d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(1<<32))
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
	if len(raw) >= minCompress {
		out := make([]byte, 1, len(raw)/4+64)
		out[0] = frameZstd
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

// ErrCorrupt is wrapped by every error about stored bytes that cannot be
// decoded or whose digest does not match.
var ErrCorrupt = errors.New("stored data is corrupted")

// Decompress returns the raw bytes held in frame.
func Decompress(frame []byte) ([]byte, error) {
	if len(frame) == 0 {
		return nil, fmt.Errorf("%w: empty frame", ErrCorrupt)
	}
	switch frame[0] {
	case frameRaw:
		return frame[1:], nil
	case frameZstd:
		raw, err := decoder().DecodeAll(frame[1:], nil)
		if err != nil {
			return nil, fmt.Errorf("%w: zstd: %v", ErrCorrupt, err)
		}
		return raw, nil
	default:
		return nil, fmt.Errorf("%w: unknown frame type %d", ErrCorrupt, frame[0])
	}
}

// Open decompresses frame and checks that its bytes hash to want.
func Open(frame []byte, want Digest) ([]byte, error) {
	raw, err := Decompress(frame)
	if err != nil {
		return nil, err
	}
	if got := Sum(raw); got != want {
		return nil, fmt.Errorf("%w: digest is %s, want %s", ErrCorrupt, got.Short(), want.Short())
	}
	return raw, nil
}
