package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
)

// A chart part is encoded as
//
//	'c' 1 uvarint(len(header)) header blobs...
//
// where header is JSON (metadata, lock, and the names and sizes of the
// values, schema, template and file blobs) and blobs are the values JSON, the
// schema and every file's data, raw and back to back. Template and file data
// make up most of a chart; keeping them out of JSON avoids base64 and a slow
// JSON decode. Nil versus empty is kept for every slice and map, so a decoded
// chart deep-equals Helm's own JSON round trip of it. Raw and dependencies are
// not kept, as Helm's JSON does not keep them.
const chartVersion = 1

type chartHeader struct {
	Metadata  json.RawMessage `json:"m"`
	Lock      json.RawMessage `json:"l"`
	Values    int             `json:"v"`
	Schema    int             `json:"s"` // -1: nil
	Templates []*fileHeader   `json:"t"`
	Files     []*fileHeader   `json:"f"`
}

type fileHeader struct {
	Name string `json:"n"`
	Size int    `json:"z"` // -1: nil data
}

func blobSize(b []byte) int {
	if b == nil {
		return -1
	}
	return len(b)
}

func fileHeaders(fs []*chart.File) []*fileHeader {
	if fs == nil {
		return nil
	}
	out := make([]*fileHeader, len(fs))
	for i, f := range fs {
		if f != nil {
			out[i] = &fileHeader{Name: f.Name, Size: blobSize(f.Data)}
		}
	}
	return out
}

// encodeChart returns the canonical bytes of c as pieces to be read in
// order: the prefix and header, then the blobs, which are c's own slices (not
// copied). Most upgrades store a chart that is already stored, so its bytes
// are only hashed, never assembled.
func encodeChart(c *chart.Chart) ([][]byte, error) {
	var h chartHeader
	var err error
	if h.Metadata, err = json.Marshal(c.Metadata); err != nil {
		return nil, fmt.Errorf("chart metadata: %w", err)
	}
	if h.Lock, err = json.Marshal(c.Lock); err != nil {
		return nil, fmt.Errorf("chart lock: %w", err)
	}
	values, err := json.Marshal(c.Values)
	if err != nil {
		return nil, fmt.Errorf("chart values: %w", err)
	}
	if err := CheckDepth(values); err != nil {
		return nil, fmt.Errorf("chart values: %w", err)
	}
	h.Values = len(values)
	h.Schema = blobSize(c.Schema)
	h.Templates = fileHeaders(c.Templates)
	h.Files = fileHeaders(c.Files)
	header, err := json.Marshal(&h)
	if err != nil {
		return nil, fmt.Errorf("chart header: %w", err)
	}
	prefix := make([]byte, 0, 2+binary.MaxVarintLen64+len(header))
	prefix = append(prefix, byte(KindChart), chartVersion)
	prefix = binary.AppendUvarint(prefix, uint64(len(header)))
	prefix = append(prefix, header...)
	pieces := [][]byte{prefix, values, c.Schema}
	for _, fs := range [][]*chart.File{c.Templates, c.Files} {
		for _, f := range fs {
			if f != nil {
				pieces = append(pieces, f.Data)
			}
		}
	}
	return pieces, nil
}

// ChartPart is a decoded, immutable chart part. Chart builds a fresh
// *chart.Chart from it each time, so callers never share mutable state.
type ChartPart struct {
	metadata  json.RawMessage
	lock      json.RawMessage
	values    map[string]interface{}
	schema    []byte
	templates []*fileEntry
	files     []*fileEntry
	size      int
}

type fileEntry struct {
	name string
	data []byte
}

func decodeChart(raw []byte) (*ChartPart, error) {
	if len(raw) < 2 || raw[0] != byte(KindChart) || raw[1] != chartVersion {
		return nil, fmt.Errorf("%w: not a chart part", ErrCorrupt)
	}
	n, k := binary.Uvarint(raw[2:])
	if k <= 0 || n > uint64(len(raw)-2-k) {
		return nil, fmt.Errorf("%w: chart header length", ErrCorrupt)
	}
	rest := raw[2+k:]
	var h chartHeader
	if err := json.Unmarshal(rest[:n], &h); err != nil {
		return nil, fmt.Errorf("%w: chart header: %v", ErrCorrupt, err)
	}
	blobs := rest[n:]
	take := func(size int) ([]byte, error) {
		if size < 0 {
			return nil, nil
		}
		if size > len(blobs) {
			return nil, fmt.Errorf("%w: chart blob overruns part", ErrCorrupt)
		}
		b := blobs[:size:size]
		blobs = blobs[size:]
		return b, nil
	}
	p := &ChartPart{metadata: h.Metadata, lock: h.Lock, size: len(raw)}
	vb, err := take(h.Values)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(vb, &p.values); err != nil {
		return nil, fmt.Errorf("%w: chart values: %v", ErrCorrupt, err)
	}
	if p.schema, err = take(h.Schema); err != nil {
		return nil, err
	}
	if h.Schema == 0 {
		p.schema = []byte{}
	}
	entries := func(hs []*fileHeader) ([]*fileEntry, error) {
		if hs == nil {
			return nil, nil
		}
		out := make([]*fileEntry, len(hs))
		for i, fh := range hs {
			if fh == nil {
				continue
			}
			d, err := take(fh.Size)
			if err != nil {
				return nil, err
			}
			if fh.Size == 0 {
				d = []byte{}
			}
			out[i] = &fileEntry{name: fh.Name, data: d}
		}
		return out, nil
	}
	if p.templates, err = entries(h.Templates); err != nil {
		return nil, err
	}
	if p.files, err = entries(h.Files); err != nil {
		return nil, err
	}
	if len(blobs) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes in chart part", ErrCorrupt, len(blobs))
	}
	return p, nil
}

// Size returns the size of the part's canonical bytes, for cache accounting.
func (p *ChartPart) Size() int { return p.size }

// Chart returns a new chart with its own copies of every field.
func (p *ChartPart) Chart() (*chart.Chart, error) {
	c := &chart.Chart{}
	if err := json.Unmarshal(p.metadata, &c.Metadata); err != nil {
		return nil, fmt.Errorf("%w: chart metadata: %v", ErrCorrupt, err)
	}
	if err := json.Unmarshal(p.lock, &c.Lock); err != nil {
		return nil, fmt.Errorf("%w: chart lock: %v", ErrCorrupt, err)
	}
	c.Values = CloneMap(p.values)
	c.Schema = cloneBytes(p.schema)
	c.Templates = cloneFiles(p.templates)
	c.Files = cloneFiles(p.files)
	return c, nil
}

// Name returns the chart's name and version from its metadata, for summaries.
func (p *ChartPart) Name() (name, version string) {
	var m struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	_ = json.Unmarshal(p.metadata, &m)
	return m.Name, m.Version
}

func cloneBytes(b []byte) []byte {
	if b == nil {
		return nil
	}
	return bytes.Clone(b)
}

func cloneFiles(es []*fileEntry) []*chart.File {
	if es == nil {
		return nil
	}
	size := 0
	for _, e := range es {
		if e != nil {
			size += len(e.data)
		}
	}
	// One allocation for all file data keeps a 2 MB chart to a single copy.
	buf := make([]byte, 0, size)
	out := make([]*chart.File, len(es))
	for i, e := range es {
		if e == nil {
			continue
		}
		f := &chart.File{Name: e.name}
		if e.data != nil {
			start := len(buf)
			buf = append(buf, e.data...)
			f.Data = buf[start:len(buf):len(buf)]
		}
		out[i] = f
	}
	return out
}
