package codec

import (
	"encoding/json"
	"fmt"
	"unsafe"
)

// ChartPart is a decoded chart part, as a face's codec decodes it: immutable,
// kept in the part cache and shared by every release built from it.
type ChartPart interface {
	// Share returns a copy of what the releases of one call built from the
	// part may share (its values and file bytes).
	Share() any
	// Adopt is Share without copying, for a part nothing else holds.
	Adopt() any
}

// ChartDecoder decodes the canonical bytes of a chart part (a face's codec).
type ChartDecoder func(raw []byte) (ChartPart, error)

// Decoded is a verified, decoded part as kept in the part cache. Exactly
// one of Chart, Values and Manifest is set, matching Kind.
type Decoded struct {
	Kind     Kind
	Chart    ChartPart
	Values   map[string]interface{}
	Manifest string
	// Raw is the canonical bytes of a values or manifest part (nil for a
	// chart): what a delta against this part is decoded with.
	Raw  []byte
	Size int // bytes held, for cache accounting
}

// DecodePart verifies that raw is a part of kind want and decodes it, a
// chart with chart.
func DecodePart(want Kind, raw []byte, chart ChartDecoder) (*Decoded, error) {
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
		c, err := chart(raw)
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
			// The string shares raw's bytes, which nothing changes once
			// decoded (Raw is kept as a delta's base): a manifest is
			// held once, not twice.
			d.Manifest = unsafe.String(unsafe.SliceData(raw[2:]), len(raw)-2)
			d.Size = len(raw)
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
