package codec

import (
	"encoding/binary"
	"fmt"

	"github.com/helmstore/helmstore/internal/parallel"
)

// frameSegments is a frame of independent zstd streams, one per segment of
// the raw bytes, so that a large part (a chart) is compressed and
// decompressed on every core instead of one:
//
//	4 uvarint(raw length) uvarint(n)
//	n × ( uvarint(segment raw length) uvarint(segment stored length) zstd )
const frameSegments byte = 4

// Parts of at least segmentMin bytes are stored in segments of segmentSize
// (the last one shorter): about 4 segments for a 1.5 MB chart, so two cores
// decompress it in two rounds, at a cost in ratio of a few percent (each
// segment is compressed without the others as context).
const (
	segmentSize = 384 << 10
	segmentMin  = 2 * segmentSize
)

// compressSegments returns the segmented frame of raw.
func compressSegments(raw []byte) []byte {
	n := (len(raw) + segmentSize - 1) / segmentSize
	zs := make([][]byte, n)
	parallel.Each(n, func(i int) {
		end := min((i+1)*segmentSize, len(raw))
		zs[i] = encoder().EncodeAll(raw[i*segmentSize:end], nil)
	})
	size := 1 + 2*binary.MaxVarintLen64
	for _, z := range zs {
		size += 2*binary.MaxVarintLen64 + len(z)
	}
	out := make([]byte, 1, size)
	out[0] = frameSegments
	out = binary.AppendUvarint(out, uint64(len(raw)))
	out = binary.AppendUvarint(out, uint64(n))
	for i, z := range zs {
		out = binary.AppendUvarint(out, uint64(min((i+1)*segmentSize, len(raw))-i*segmentSize))
		out = binary.AppendUvarint(out, uint64(len(z)))
		out = append(out, z...)
	}
	return out
}

// decompressSegments returns the raw bytes of a segmented frame (without its
// type byte), refusing more than limit in all. Every length is checked
// against what is left before anything is allocated, and each segment is
// decoded into its own place in the output with no room to grow: stored
// bytes cannot make it allocate more than the recorded size.
func decompressSegments(b []byte, limit int) ([]byte, error) {
	bad := func(what string) error { return fmt.Errorf("%w: segmented frame: %s", ErrCorrupt, what) }
	total, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, bad("size")
	}
	if total > uint64(limit) {
		return nil, fmt.Errorf("%w: frame claims %d bytes, more than the limit of %d", ErrCorrupt, total, limit)
	}
	b = b[k:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n == 0 || n > total {
		return nil, bad("segment count")
	}
	b = b[k:]
	type segment struct {
		off, size int
		z         []byte
	}
	segs := make([]segment, 0, min(n, uint64(len(b)/2)+1))
	off := uint64(0)
	for i := uint64(0); i < n; i++ {
		size, k1 := binary.Uvarint(b)
		if k1 <= 0 || size == 0 || size > total-off {
			return nil, bad(fmt.Sprintf("segment %d size", i))
		}
		zlen, k2 := binary.Uvarint(b[k1:])
		if k2 <= 0 || zlen > uint64(len(b)-k1-k2) {
			return nil, bad(fmt.Sprintf("segment %d length", i))
		}
		b = b[k1+k2:]
		segs = append(segs, segment{off: int(off), size: int(size), z: b[:zlen]})
		b = b[zlen:]
		off += size
	}
	if off != total || len(b) != 0 {
		return nil, bad("segments do not add up to the recorded size")
	}
	out := make([]byte, total)
	errs := make([]error, len(segs))
	parallel.Each(len(segs), func(i int) {
		s := segs[i]
		// Decoded in place, with no room to grow: the decoder (which
		// limits itself to the capacity it is given) fails on a stream
		// that inflates to more than its segment records.
		got, err := decoder().DecodeAll(s.z, out[s.off:s.off:s.off+s.size])
		if err == nil && (len(got) != s.size || &got[0] != &out[s.off]) {
			err = fmt.Errorf("inflates to more or less than the %d bytes it records", s.size)
		}
		errs[i] = err
	})
	for i, err := range errs {
		if err != nil {
			return nil, bad(fmt.Sprintf("segment %d: %v", i, err))
		}
	}
	return out, nil
}
