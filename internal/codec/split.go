package codec

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/helmstore/helmstore/driver"
)

// Split is a release taken apart: its head body and its parts.
type Split struct {
	// Body is the stored frame of the head: the release's JSON without
	// chart, values and manifest.
	Body []byte
	// Parts holds the chart, values and manifest parts; an absent one is nil.
	Chart, Values, Manifest *Part
}

// Parts returns the parts that are present.
func (s *Split) Parts() []*Part {
	var out []*Part
	for _, p := range []*Part{s.Chart, s.Values, s.Manifest} {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}

// Digest returns the digest of the part of kind k, or the zero digest.
func (s *Split) Digest(k Kind) Digest {
	if p := s.Part(k); p != nil {
		return p.Digest
	}
	return Digest{}
}

// Part returns the part of kind k, or nil.
func (s *Split) Part(k Kind) *Part {
	switch k {
	case KindChart:
		return s.Chart
	case KindValues:
		return s.Values
	case KindManifest:
		return s.Manifest
	}
	return nil
}

// manifest encodings (second byte of a manifest part).
const (
	manifestUTF8 = 1 // the string's bytes as they are
	manifestJSON = 2 // a JSON string, for manifests that are not valid UTF-8
)

const valuesVersion = 1

// Meta is what the engine reads of a release, as a face's codec gives it:
// what it checks and indexes. No Helm type appears in it.
type Meta struct {
	Name      string
	Namespace string // "" for the store's
	Version   int
	// Status is Info.Status; HasInfo is false for a release with no Info,
	// which no store accepts.
	Status  string
	HasInfo bool
	// Labels are the release's labels (system ones included, as given).
	Labels map[string]string
	// The summary of the head (driver.Head.SummaryFields; HasSummary
	// unused).
	driver.SummaryFields
}

// FinishHead returns the stored frame of a head's JSON (the release without
// chart, values, manifest and labels) in release format f, refusing one over
// MaxHeadBytes or nested deeper than Helm can read.
func FinishHead(f Format, body []byte) ([]byte, error) {
	if len(body)+1 > MaxHeadBytes {
		return nil, fmt.Errorf("release without chart, values and manifest is %d bytes of JSON, more than the limit of %d", len(body), MaxHeadBytes-1)
	}
	if err := CheckDepth(body); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	raw := make([]byte, 0, len(body)+1)
	return Compress(append(append(raw, byte(f)), body...)), nil
}

// SplitRelease takes a release apart in format f: head encodes its JSON
// without chart, values, manifest and labels; chart, when not nil, encodes
// its chart into pieces (NewPieces), and runs while the rest is encoded, as
// the chart is most of the bytes and its SHA-256 most of the time.
func SplitRelease(f Format, head func() ([]byte, error), chart func() ([][]byte, error), values map[string]interface{}, manifest string) (*Split, error) {
	r := &Split{}
	var chartPart *Part
	var chartErr error
	chartDone := make(chan struct{})
	go func() {
		defer close(chartDone)
		if chart != nil {
			var pieces [][]byte
			if pieces, chartErr = chart(); chartErr == nil {
				chartPart = NewPieces(KindChart, pieces)
			}
		}
	}()
	defer func() { <-chartDone }()
	body, err := head()
	if err != nil {
		return nil, fmt.Errorf("encode release: %w", err)
	}
	if r.Body, err = FinishHead(f, body); err != nil {
		return nil, err
	}
	if r.Values, err = ValuesPart(values); err != nil {
		return nil, err
	}
	if r.Manifest, err = ManifestPart(manifest); err != nil {
		return nil, err
	}
	<-chartDone
	if chartErr != nil {
		return nil, chartErr
	}
	r.Chart = chartPart
	if err := r.CheckSizes(); err != nil {
		return nil, err
	}
	return r, nil
}

// CopyLabels returns a copy of labels, never nil (what a release read back
// holds).
func CopyLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		out[k] = v
	}
	return out
}

// ValuesPart returns the values part of a release's user values (Helm's
// Config), or nil for none: Helm's JSON drops empty values (omitempty), so
// they round-trip as nil.
func ValuesPart(values map[string]interface{}) (*Part, error) {
	if len(values) == 0 {
		return nil, nil
	}
	v, err := json.Marshal(values)
	if err != nil {
		return nil, fmt.Errorf("encode values: %w", err)
	}
	if err := CheckDepth(v); err != nil {
		return nil, fmt.Errorf("values: %w", err)
	}
	raw := make([]byte, 0, len(v)+2)
	raw = append(append(raw, byte(KindValues), valuesVersion), v...)
	return NewPart(KindValues, raw), nil
}

// ManifestPart returns the part of a rendered manifest, or nil for none.
func ManifestPart(manifest string) (*Part, error) {
	if manifest == "" {
		return nil, nil
	}
	if utf8.ValidString(manifest) {
		raw := make([]byte, 0, len(manifest)+2)
		raw = append(append(raw, byte(KindManifest), manifestUTF8), manifest...)
		return NewPart(KindManifest, raw), nil
	}
	// JSON replaces invalid UTF-8; so must we, to match Helm.
	v, err := json.Marshal(manifest)
	if err != nil {
		return nil, fmt.Errorf("encode manifest: %w", err)
	}
	return NewPart(KindManifest, append([]byte{byte(KindManifest), manifestJSON}, v...)), nil
}

// CheckSizes refuses a split whose parts are over MaxPartBytes.
func (s *Split) CheckSizes() error {
	for _, p := range s.Parts() {
		if p.Size > MaxPartBytes {
			return fmt.Errorf("%s is %d bytes, more than the limit of %d", p.Kind, p.Size, MaxPartBytes)
		}
	}
	return nil
}
