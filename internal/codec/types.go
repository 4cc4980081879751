package codec

import "github.com/helmstore/helmstore/driver"

// The codec works in the backend interface's own types: a digest, a kind and
// the corrupt-data sentinel are the same values on both sides.
type (
	// Digest is driver.Digest.
	Digest = driver.Digest
	// Kind is driver.Kind.
	Kind = driver.Kind
)

// The kinds of part (driver.KindChart, ...).
const (
	KindChart    = driver.KindChart
	KindValues   = driver.KindValues
	KindManifest = driver.KindManifest
)

// Kinds lists every kind, in the order a head references them.
var Kinds = driver.Kinds()

// ErrCorrupt is wrapped by every error about bytes that cannot be
// decoded or whose digest does not match: driver.ErrCorrupt.
var ErrCorrupt = driver.ErrCorrupt

// Sum returns the digest of raw.
func Sum(raw []byte) Digest { return driver.Sum(raw) }

// ParseDigest parses a digest stored as text (driver.ParseDigest).
func ParseDigest(s string) (Digest, error) { return driver.ParseDigest(s) }
