package codec

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"sync"
	"unicode/utf8"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
)

// Part is one content-addressed piece of a release, ready to store: the
// driver.Part a backend is given, with the canonical bytes the engine
// computes deltas from.
type Part struct {
	*driver.Part

	pieces  [][]byte // the canonical bytes, in pieces
	rawOnce sync.Once
	raw     []byte
}

// NewPart wraps canonical bytes as a part.
func NewPart(kind Kind, raw []byte) *Part { return newPart(kind, [][]byte{raw}) }

func newPart(kind Kind, pieces [][]byte) *Part {
	h := sha256.New()
	n := 0
	for _, b := range pieces {
		h.Write(b)
		n += len(b)
	}
	var d Digest
	h.Sum(d[:0])
	p := &Part{pieces: pieces}
	p.Part = driver.NewPart(kind, d, n, func() []byte { return Compress(p.Raw()) })
	return p
}

// Raw returns the canonical bytes (assembled on first use).
func (p *Part) Raw() []byte {
	p.rawOnce.Do(func() {
		if len(p.pieces) == 1 {
			p.raw = p.pieces[0]
			return
		}
		p.raw = make([]byte, 0, p.Size)
		for _, b := range p.pieces {
			p.raw = append(p.raw, b...)
		}
	})
	return p.raw
}

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

// SplitRelease takes rls apart. rls is not modified. Info.Resources is not
// kept: Helm fills it only for display, and Helm's own drivers cannot read a
// release back once it is stored.
func SplitRelease(rls *release.Release) (*Split, error) {
	head := *rls
	head.Chart, head.Config, head.Manifest, head.Labels = nil, nil, "", nil
	if rls.Info != nil && rls.Info.Resources != nil {
		info := *rls.Info
		info.Resources = nil
		head.Info = &info
	}
	s := &Split{}
	// The chart is most of the bytes (and its SHA-256 most of the time):
	// hash it while the rest is encoded.
	var chart *Part
	var chartErr error
	chartDone := make(chan struct{})
	go func() {
		defer close(chartDone)
		if rls.Chart != nil {
			var pieces [][]byte
			if pieces, chartErr = encodeChart(rls.Chart); chartErr == nil {
				chart = newPart(KindChart, pieces)
			}
		}
	}()
	defer func() { <-chartDone }()
	body, err := json.Marshal(&head)
	if err != nil {
		return nil, fmt.Errorf("encode release: %w", err)
	}
	if len(body) > MaxHeadBytes {
		return nil, fmt.Errorf("release without chart, values and manifest is %d bytes of JSON, more than the limit of %d", len(body), MaxHeadBytes)
	}
	if err := CheckDepth(body); err != nil {
		return nil, fmt.Errorf("release: %w", err)
	}
	s.Body = Compress(body)
	// Helm's JSON drops empty values (omitempty), so they round-trip as nil.
	if len(rls.Config) > 0 {
		v, err := json.Marshal(rls.Config)
		if err != nil {
			return nil, fmt.Errorf("encode values: %w", err)
		}
		if err := CheckDepth(v); err != nil {
			return nil, fmt.Errorf("values: %w", err)
		}
		raw := make([]byte, 0, len(v)+2)
		raw = append(append(raw, byte(KindValues), valuesVersion), v...)
		s.Values = NewPart(KindValues, raw)
	}
	if rls.Manifest != "" {
		var raw []byte
		if utf8.ValidString(rls.Manifest) {
			raw = make([]byte, 0, len(rls.Manifest)+2)
			raw = append(append(raw, byte(KindManifest), manifestUTF8), rls.Manifest...)
		} else {
			// JSON replaces invalid UTF-8; so must we, to match Helm.
			v, err := json.Marshal(rls.Manifest)
			if err != nil {
				return nil, fmt.Errorf("encode manifest: %w", err)
			}
			raw = append([]byte{byte(KindManifest), manifestJSON}, v...)
		}
		s.Manifest = NewPart(KindManifest, raw)
	}
	<-chartDone
	if chartErr != nil {
		return nil, chartErr
	}
	s.Chart = chart
	for _, p := range s.Parts() {
		if p.Size > MaxPartBytes {
			return nil, fmt.Errorf("%s is %d bytes, more than the limit of %d", p.Kind, p.Size, MaxPartBytes)
		}
	}
	return s, nil
}

// Decoded is a verified, decoded part as kept in the part cache. Exactly
// one of Chart, Values and Manifest is set, matching Kind.
type Decoded struct {
	Kind     Kind
	Chart    *ChartPart
	Values   map[string]interface{}
	Manifest string
	// Raw is the canonical bytes of a values or manifest part (nil for a
	// chart): what a delta against this part is decoded with.
	Raw  []byte
	Size int // bytes held, for cache accounting
}

// DecodePart verifies that raw is a part of kind want and decodes it.
func DecodePart(want Kind, raw []byte) (*Decoded, error) {
	if len(raw) < 2 || Kind(raw[0]) != want {
		return nil, fmt.Errorf("%w: expected a %s part", ErrCorrupt, want)
	}
	d := &Decoded{Kind: want, Size: len(raw)}
	if want != KindChart {
		// The canonical bytes are kept too (a delta's base), so the part
		// holds about twice their size.
		d.Raw, d.Size = raw, 2*len(raw)
	}
	switch want {
	case KindChart:
		c, err := decodeChart(raw)
		if err != nil {
			return nil, err
		}
		d.Chart = c
	case KindValues:
		if raw[1] != valuesVersion {
			return nil, fmt.Errorf("%w: values encoding %d", ErrCorrupt, raw[1])
		}
		if err := json.Unmarshal(raw[2:], &d.Values); err != nil {
			return nil, fmt.Errorf("%w: values: %v", ErrCorrupt, err)
		}
	case KindManifest:
		switch raw[1] {
		case manifestUTF8:
			d.Manifest = string(raw[2:])
		case manifestJSON:
			if err := json.Unmarshal(raw[2:], &d.Manifest); err != nil {
				return nil, fmt.Errorf("%w: manifest: %v", ErrCorrupt, err)
			}
		default:
			return nil, fmt.Errorf("%w: manifest encoding %d", ErrCorrupt, raw[1])
		}
	default:
		return nil, fmt.Errorf("%w: unknown part kind %d", ErrCorrupt, raw[0])
	}
	return d, nil
}

// Assemble rebuilds a release from its head's JSON (OpenHead) and decoded
// parts (nil for an absent part). The result shares no mutable memory with
// the parts.
func Assemble(raw []byte, chart, values, manifest *Decoded, labels map[string]string) (*release.Release, error) {
	var err error
	rls := new(release.Release)
	if err := json.Unmarshal(raw, rls); err != nil {
		return nil, fmt.Errorf("%w: head: %v", ErrCorrupt, err)
	}
	if chart != nil {
		if rls.Chart, err = chart.Chart.Chart(); err != nil {
			return nil, err
		}
	}
	if values != nil {
		rls.Config = CloneMap(values.Values)
	}
	if manifest != nil {
		rls.Manifest = manifest.Manifest
	}
	rls.Labels = make(map[string]string, len(labels))
	for k, v := range labels {
		rls.Labels[k] = v
	}
	return rls, nil
}
