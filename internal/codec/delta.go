package codec

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"

	"github.com/helmstore/helmstore/driver"
)

// A delta part holds the canonical bytes of a values or manifest part as
// copies from a base part (a full part of the same kind: a keyframe) and the
// bytes the base lacks. A values-only upgrade changes a few lines of a
// manifest; its delta against the previous manifest is a few hundred bytes
// where the full part is tens of KiB, and it encodes and decodes in tens of
// microseconds (deltaops.go: no dictionary to load, unlike zstd with the
// base as dictionary, which cost milliseconds each way).
//
// A delta is never taken against another delta, so a read needs at most two
// parts: the delta and its base.
//
// Frame: frameDelta, the 32-byte digest of the base, uvarint(raw length),
// then the operations (deltaops.go) as a full frame (raw, zstd or segments).
//
// Identity: a delta part is addressed by DeltaDigest(base, content), never
// by the digest of its content, so it cannot be mistaken for (or deduplicated
// with) the full part of the same content: a head that references a full
// part can never be left pointing at a delta whose base is gone.

// deltaTag starts the bytes hashed into a delta part's identity.
const deltaTag = "helmstore delta v2\x00"

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
	raw := p.Raw()
	ops := Compress(deltaOps(base.Raw(), raw))
	frame := make([]byte, 0, 1+len(base.Digest)+binary.MaxVarintLen64+len(ops))
	frame = append(frame, frameDelta)
	frame = append(frame, base.Digest[:]...)
	frame = binary.AppendUvarint(frame, uint64(len(raw)))
	frame = append(frame, ops...)
	d := &Part{pieces: p.pieces}
	d.Part = driver.NewPart(p.Kind, DeltaDigest(base.Digest, p.Digest), p.Size, func() []byte { return frame })
	d.Base, d.Content = base.Digest, p.Digest
	return d, nil
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
	ops, err := decompress(rest[k:], maxOpsBytes(n))
	if err != nil {
		return nil, fmt.Errorf("delta: %w", err)
	}
	raw, err := applyDeltaOps(ops, baseRaw, int(n))
	if err != nil {
		return nil, err
	}
	if got := DeltaDigest(base, Sum(raw)); got != want {
		return nil, fmt.Errorf("%w: delta digest is %s, want %s", ErrCorrupt, got.Short(), want.Short())
	}
	return raw, nil
}
