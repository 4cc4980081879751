package codec

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/klauspost/compress/zstd"
)

// A delta part holds the canonical bytes of a values or manifest part
// compressed with zstd, using the canonical bytes of a base part (a full part
// of the same kind: a keyframe) as a raw-content dictionary. A values-only
// upgrade changes a few lines of a manifest; its delta against the previous
// manifest is a few hundred bytes where the full part is tens of KiB.
//
// A delta is never taken against another delta, so a read needs at most two
// parts: the delta and its base.
//
// Frame: frameDelta, the 32-byte digest of the base, uvarint(raw length),
// one zstd stream whose dictionary is the base's canonical bytes.
//
// Identity: a delta part is addressed by DeltaDigest(base, content), never
// by the digest of its content, so it cannot be mistaken for (or deduplicated
// with) the full part of the same content: a head that references a full
// part can never be left pointing at a delta whose base is gone.

// deltaTag starts the bytes hashed into a delta part's identity.
const deltaTag = "helmstore delta v1\x00"

// MaxDeltaBytes bounds the base and the content of a delta: larger parts are
// always stored full (a delta is then rarely small, and encoding it costs
// memory in proportion).
const MaxDeltaBytes = 32 << 20

// DeltaDigest returns the identity of the delta part holding the canonical
// bytes whose digest is content, against the base part whose digest is base.
func DeltaDigest(base, content Digest) Digest {
	h := sha256.New()
	h.Write([]byte(deltaTag))
	h.Write(base[:])
	h.Write(content[:])
	var d Digest
	h.Sum(d[:0])
	return d
}

// Delta returns p stored as a delta against base, a full part of the same
// kind: a part whose Digest is DeltaDigest(base.Digest, p.Digest), whose
// Base is base.Digest and whose Frame (computed now) is the delta. It fails
// if p or base is itself a delta, of another kind, or larger than
// MaxDeltaBytes.
func Delta(p, base *Part) (*Part, error) {
	switch {
	case p.IsDelta() || base.IsDelta():
		return nil, fmt.Errorf("delta of a delta")
	case p.Kind != base.Kind:
		return nil, fmt.Errorf("delta of a %s part against a %s part", p.Kind, base.Kind)
	case p.Size > MaxDeltaBytes || base.Size > MaxDeltaBytes:
		return nil, fmt.Errorf("part too large for a delta")
	}
	e, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderDictRaw(0, base.Raw()), zstd.WithWindowSize(deltaWindow(base.Size+p.Size)))
	if err != nil {
		return nil, err
	}
	defer e.Close()
	raw := p.Raw()
	frame := make([]byte, 0, 1+len(base.Digest)+binary.MaxVarintLen64+len(raw)/16+64)
	frame = append(frame, frameDelta)
	frame = append(frame, base.Digest[:]...)
	frame = binary.AppendUvarint(frame, uint64(len(raw)))
	frame = e.EncodeAll(raw, frame)
	d := &Part{Kind: p.Kind, Digest: DeltaDigest(base.Digest, p.Digest), Size: p.Size, Base: base.Digest, Content: p.Digest,
		pieces: p.pieces}
	d.frameOnce.Do(func() { d.frame = frame })
	return d, nil
}

// deltaWindow is the zstd window a delta of n bytes (base and content) is
// encoded with: large enough to reach back to the start of the base.
func deltaWindow(n int) int {
	w := zstd.MinWindowSize
	for w < n && w < zstd.MaxWindowSize {
		w <<= 1
	}
	return w
}

// IsDeltaFrame reports whether frame holds a delta part.
func IsDeltaFrame(frame []byte) bool { return len(frame) > 0 && frame[0] == frameDelta }

// OpenDelta decodes the delta frame of the part whose identity is want,
// against base, the digest of its base part, whose canonical bytes
// (verified by the caller) are baseRaw. It checks that the frame names base,
// inflates to no more than MaxPartBytes nor more or less than it records,
// and that DeltaDigest(base, digest of what it inflates to) is want. It
// returns the canonical bytes.
func OpenDelta(frame []byte, want, base Digest, baseRaw []byte) ([]byte, error) {
	if !IsDeltaFrame(frame) {
		return nil, fmt.Errorf("%w: a delta part is stored as a full one", ErrCorrupt)
	}
	if len(frame) < 1+len(base) {
		return nil, fmt.Errorf("%w: truncated delta", ErrCorrupt)
	}
	if named := Digest(frame[1 : 1+len(base)]); named != base {
		return nil, fmt.Errorf("%w: delta against base %s, its release names base %s", ErrCorrupt, named.Short(), base.Short())
	}
	rest := frame[1+len(base):]
	n, k := binary.Uvarint(rest)
	if k <= 0 {
		return nil, fmt.Errorf("%w: delta size", ErrCorrupt)
	}
	if n > MaxPartBytes {
		return nil, fmt.Errorf("%w: delta claims %d bytes, more than the limit of %d", ErrCorrupt, n, MaxPartBytes)
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderDictRaw(0, baseRaw),
		zstd.WithDecodeAllCapLimit(true), zstd.WithDecoderMaxMemory(MaxPartBytes+1<<20))
	if err != nil {
		return nil, fmt.Errorf("delta decoder: %v", err)
	}
	defer d.Close()
	// As in decompress: one byte of room past the recorded size, so that a
	// stream that inflates to more than it claims is stopped as such.
	raw, err := d.DecodeAll(rest[k:], make([]byte, 0, int(n)+1))
	if err != nil {
		return nil, fmt.Errorf("%w: delta: zstd: %v", ErrCorrupt, err)
	}
	if uint64(len(raw)) != n {
		return nil, fmt.Errorf("%w: delta inflates to more or less than the %d bytes it records", ErrCorrupt, n)
	}
	if got := DeltaDigest(base, Sum(raw)); got != want {
		return nil, fmt.Errorf("%w: delta digest is %s, want %s", ErrCorrupt, got.Short(), want.Short())
	}
	return raw, nil
}
