package driver

import (
	"crypto/sha256"
	"fmt"
)

// The first byte of a sealed head body (the frame types of parts are the
// engine's; this one is part of the stored head's contract).
const frameSealed byte = 2

const sealSize = sha256.Size

// seal returns the checksum binding a head's body to its key and part
// digests: a head whose body, key or digests were changed apart from the
// others (a hand edit, a row copied from another release) does not verify.
// A head without bases is sealed as heads were before bases existed (v1).
func (h *Head) seal(inner []byte) [sealSize]byte {
	s := sha256.New()
	v2 := !h.ValuesBase.IsZero() || !h.ManifestBase.IsZero()
	if v2 {
		s.Write([]byte("helmstore head v2\x00"))
	} else {
		s.Write([]byte("helmstore head v1\x00"))
	}
	s.Write([]byte(h.Key))
	s.Write([]byte{0})
	s.Write(h.Chart[:])
	s.Write(h.Values[:])
	s.Write(h.Manifest[:])
	if v2 {
		s.Write(h.ValuesBase[:])
		s.Write(h.ManifestBase[:])
	}
	s.Write(inner)
	var out [sealSize]byte
	s.Sum(out[:0])
	return out
}

// Seal sets h.Body to frame sealed over h.Key and h's part digests, which
// must be set first. Engines seal the heads they write; backends store Body
// as it is.
func (h *Head) Seal(frame []byte) {
	s := h.seal(frame)
	out := make([]byte, 0, 1+sealSize+len(frame))
	out = append(out, frameSealed)
	out = append(out, s[:]...)
	h.Body = append(out, frame...)
}

// Unseal returns the frame inside h.Body after checking its seal against
// h.Key and h's part digests (Verify).
func (h *Head) Unseal() ([]byte, error) {
	if len(h.Body) == 0 {
		return nil, fmt.Errorf("%w: head has no body", ErrCorrupt)
	}
	if h.Body[0] != frameSealed || len(h.Body) < 1+sealSize {
		return nil, fmt.Errorf("%w: head body is not sealed", ErrCorrupt)
	}
	inner := h.Body[1+sealSize:]
	if [sealSize]byte(h.Body[1:1+sealSize]) != h.seal(inner) {
		return nil, fmt.Errorf("%w: head checksum does not match its body, key and part digests", ErrCorrupt)
	}
	return inner, nil
}

// Verify returns an error when the part digests of h cannot be trusted: its
// seal over body, key and digests does not match (a head edited, copied from
// another release, or unreadable). A backend deleting such a head must not
// drop references to the digests it names: they may be another release's
// parts. A head with Err whose seal still verifies (only its labels were
// damaged, say) names its own parts.
func (h *Head) Verify() error {
	_, err := h.Unseal()
	return err
}
