package driver

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Digest is the SHA-256 of a part's canonical, uncompressed bytes.
type Digest [sha256.Size]byte

// Sum returns the digest of raw.
func Sum(raw []byte) Digest { return Digest(sha256.Sum256(raw)) }

// IsZero reports whether d is the zero digest, which stands for "no part".
func (d Digest) IsZero() bool { return d == Digest{} }

// String returns d as 64 lowercase hex digits ("" for the zero digest).
func (d Digest) String() string {
	if d.IsZero() {
		return ""
	}
	return hex.EncodeToString(d[:])
}

// Short returns the first 12 hex digits of d, for object names and messages
// ("" for the zero digest).
func (d Digest) Short() string {
	if d.IsZero() {
		return ""
	}
	return hex.EncodeToString(d[:6])
}

// ParseDigest parses 64 hex digits; "" parses as the zero digest.
func ParseDigest(s string) (Digest, error) {
	var d Digest
	if s == "" {
		return d, nil
	}
	if len(s) != 2*len(d) {
		return d, fmt.Errorf("digest %q: want %d hex digits", s, 2*len(d))
	}
	if _, err := hex.Decode(d[:], []byte(s)); err != nil {
		return d, fmt.Errorf("digest %q: %v", s, err)
	}
	return d, nil
}
