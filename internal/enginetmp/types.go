package backend

import "github.com/helmstore/helmstore/internal/codec"

// Digest is the SHA-256 that addresses a part (the zero Digest stands for
// "no part"). Its String form, 64 lowercase hex digits ("" for the zero
// digest), is how backends store it; ParseDigest reads it back.
type Digest = codec.Digest

// Part is one content-addressed piece of a release (its chart, values or
// manifest) as the engine hands it to Backend.Create and Backend.Update.
// A backend stores Part.Frame() under Part.Digest (and may record Part.Kind
// and Part.Size); Frame is computed on first use, so a backend that already
// holds the part should not call it.
type Part = codec.Part

// Kind names what a part holds: KindChart, KindValues or KindManifest.
type Kind = codec.Kind

// The kinds of part a release is split into. Kind.String gives "chart",
// "values" and "manifest"; ParseKind reads them back.
const (
	KindChart    = codec.KindChart
	KindValues   = codec.KindValues
	KindManifest = codec.KindManifest
)

// Kinds returns every kind, in the order a head references them.
func Kinds() []Kind { return append([]Kind(nil), codec.Kinds...) }

// ParseDigest parses a digest stored as text (Digest.String): 64 hex
// digits, or "" for the zero digest.
func ParseDigest(s string) (Digest, error) { return codec.ParseDigest(s) }

// ParseKind parses a kind stored as text (Kind.String).
func ParseKind(s string) (Kind, error) { return codec.ParseKind(s) }
