package helm3codec

import (
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/internal/codec"
)

// Shorthands for the tests of this package, which exercise the Helm 3 codec
// together with the neutral one it stands on.
type (
	Part    = codec.Part
	Decoded = codec.Decoded
	Digest  = codec.Digest
)

const (
	KindChart    = codec.KindChart
	KindValues   = codec.KindValues
	KindManifest = codec.KindManifest
	MaxJSONDepth = codec.MaxJSONDepth
	MaxPartBytes = codec.MaxPartBytes
)

var (
	ErrCorrupt       = codec.ErrCorrupt
	Open             = codec.Open
	OpenHead         = codec.OpenHead
	Sum              = codec.Sum
	Compress         = codec.Compress
	hashAlongsideMin = 256 << 10 // codec's threshold (openpart.go)
)

func newPart(k codec.Kind, pieces [][]byte) *Part { return codec.NewPieces(k, pieces) }

// SplitRelease is the codec's Split.
func SplitRelease(rls *release.Release) (*codec.Split, error) { return Codec{}.Split(rls) }

// DecodePart decodes a part, a chart with this package's decoder.
func DecodePart(k codec.Kind, raw []byte) (*Decoded, error) {
	return codec.DecodePart(k, raw, Codec{}.DecodeChart)
}

// OpenPart is codec.OpenPart with this package's chart decoder.
func OpenPart(k codec.Kind, frame []byte, want Digest) (*Decoded, error) {
	return codec.OpenPart(k, frame, want, Codec{}.DecodeChart)
}

// Assemble is the codec's Assemble with a chart of its own.
func Assemble(head []byte, chart, values, manifest *Decoded, labels map[string]string) (*release.Release, error) {
	if chart == nil {
		return Codec{}.Assemble(head, nil, nil, values, manifest, labels)
	}
	return Codec{}.Assemble(head, chart.Chart, chart.Chart.Share(), values, manifest, labels)
}

// chartOf builds a new chart from a decoded chart part.
func chartOf(d *Decoded) (*chart.Chart, error) { return d.Chart.(*ChartPart).Chart() }

// The tags of the chart values' binary tree (package codec's chart.go),
// for the damage tests to write by hand.
const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagNumber
	tagString
	tagMap
	tagList
)
