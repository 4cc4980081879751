package engine

import "github.com/helmstore/helmstore/internal/codec"

// Codec is the one seam between the engine and a Helm version: its release
// type R taken apart into the neutral form (codec.Meta, codec.Split) and
// put back together. Each face has one (helm3codec.Codec); the engine, the
// codec and the backends know no Helm type.
type Codec[R any] interface {
	// Format is the release format the codec writes and reads: a head of
	// another format is an error naming the release (codec.FormatError).
	Format() codec.Format
	// Meta returns what the engine checks and indexes of rls (cheap: no
	// part is encoded).
	Meta(rls *R) codec.Meta
	// Identity returns the name, version and namespace rls says it has:
	// what a release read back is checked against (cheaper than Meta, on
	// every release a read returns).
	Identity(rls *R) (name string, version int, namespace string)
	// Split takes rls apart into its head's JSON and its parts.
	Split(rls *R) (*codec.Split, error)
	// DecodeChart decodes the canonical bytes of a chart part.
	DecodeChart(raw []byte) (codec.ChartPart, error)
	// Assemble builds a release from its head's JSON and decoded parts
	// (nil for an absent one), its chart on shared (a Share or Adopt of
	// chart), with labels. The values tree is the call's own (the engine
	// copied it from the cache once for the releases of one call, as it
	// shares charts): Assemble uses it as it is.
	Assemble(head []byte, chart codec.ChartPart, shared any, values, manifest *codec.Decoded, labels map[string]string) (*R, error)
	// Stub returns the release a head names, for one whose stored data
	// cannot be decoded.
	Stub(name string, version int, namespace, status string) *R
}
