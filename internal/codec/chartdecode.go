package codec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"
	"unicode/utf8"
)

// Chart is a decoded chart part as DecodeChart gives it to a face, which
// builds its Helm's chart from it (on a ChartShare): immutable, so one
// decoded part serves every release built from it. Its metadata and lock
// are the face's, decoded by DecodeChart into the face's types.
type Chart struct {
	values        map[string]interface{}
	hasSchema     bool // the schema is not nil
	schemaSize    int
	templates     ChartTable
	files         ChartTable
	modTime       time.Time
	schemaModTime time.Time
	blobData      []byte // the blobs, back to back, in order
	size          int
}

// ChartTable is a decoded chart's templates or files (Chart.Templates,
// Chart.Files), which BuildFiles builds a face's files from.
type ChartTable struct {
	entries []chartEntry
	files   int  // entries that are not nil files
	isNil   bool // a nil slice
}

type chartEntry struct {
	name    string
	modTime time.Time
	off     int // of the data in the blobs
	size    int
	flag    byte
}

// chartReader reads the sections of a chart part before its blobs.
type chartReader struct {
	b []byte
}

var errChart = fmt.Errorf("%w: chart", ErrCorrupt)

func (r *chartReader) uvarint(what string) (uint64, error) {
	x, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, fmt.Errorf("%w %s: bad length", errChart, what)
	}
	r.b = r.b[n:]
	return x, nil
}

func (r *chartReader) bytes(what string) ([]byte, error) {
	n, err := r.uvarint(what)
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.b)) {
		return nil, fmt.Errorf("%w %s: %d bytes overrun the part", errChart, what, n)
	}
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out, nil
}

// table reads a file table, placing its data in the blobs from *blobs on
// (which it advances).
func (r *chartReader) table(what string, blobs *int) (ChartTable, error) {
	n, err := r.uvarint(what)
	if err != nil {
		return ChartTable{}, err
	}
	if n == 0 {
		return ChartTable{isNil: true}, nil
	}
	n--
	if n > uint64(len(r.b)) { // every entry is at least one byte
		return ChartTable{}, fmt.Errorf("%w %s: %d entries overrun the part", errChart, what, n)
	}
	out := make([]chartEntry, n)
	files := 0
	for i := range out {
		if len(r.b) == 0 {
			return ChartTable{}, fmt.Errorf("%w %s: truncated", errChart, what)
		}
		e := &out[i]
		e.flag = r.b[0]
		r.b = r.b[1:]
		switch e.flag {
		case fileNil:
			continue
		case fileNoData, fileData:
		default:
			return ChartTable{}, fmt.Errorf("%w %s: entry %d: unknown flag %d", errChart, what, i, e.flag)
		}
		name, err := r.bytes(what + " name")
		if err != nil {
			return ChartTable{}, err
		}
		if !utf8.Valid(name) {
			return ChartTable{}, fmt.Errorf("%w %s: entry %d: name is not valid UTF-8", errChart, what, i)
		}
		e.name = string(name)
		files++
		if e.flag == fileData {
			size, err := r.uvarint(what + " size")
			if err != nil {
				return ChartTable{}, err
			}
			if size > MaxPartBytes || *blobs+int(size) > MaxPartBytes {
				return ChartTable{}, fmt.Errorf("%w %s %q: %d bytes, more than the part can hold", errChart, what, e.name, size)
			}
			e.off, e.size = *blobs, int(size)
			*blobs += e.size
		}
	}
	return ChartTable{entries: out, files: files}, nil
}

// DecodeChart decodes the canonical bytes of a chart part (either version),
// its metadata and lock JSON into metadata and lock (pointers to a face's
// types, as for json.Unmarshal). Every error wraps ErrCorrupt, and no count
// or length is believed before the bytes it stands for are there, so what
// it allocates is a small multiple of len(raw) at most (a file table entry,
// the largest, is 64 bytes for one byte of a nil file).
func DecodeChart(raw []byte, metadata, lock any) (*Chart, error) {
	if len(raw) < 2 || raw[0] != byte(KindChart) {
		return nil, fmt.Errorf("%w: not a chart part", ErrCorrupt)
	}
	version := raw[1]
	if version != chartVersion && version != chartVersionTimes {
		return nil, fmt.Errorf("%w: chart encoding %d", ErrCorrupt, raw[1])
	}
	if len(raw) > MaxPartBytes {
		return nil, fmt.Errorf("%w: chart part of %d bytes, more than the limit of %d", ErrCorrupt, len(raw), MaxPartBytes)
	}
	r := &chartReader{b: raw[2:]}
	p := &Chart{size: len(raw)}
	metadataJSON, err := r.bytes("metadata")
	if err != nil {
		return nil, err
	}
	lockJSON, err := r.bytes("lock")
	if err != nil {
		return nil, err
	}
	values, err := r.bytes("values")
	if err != nil {
		return nil, err
	}
	schema, err := r.uvarint("schema")
	if err != nil {
		return nil, err
	}
	if schema > MaxPartBytes {
		return nil, fmt.Errorf("%w schema: %d bytes, more than the part can hold", errChart, schema-1)
	}
	blobs := 0
	if schema > 0 {
		p.hasSchema, p.schemaSize = true, int(schema-1)
		blobs = p.schemaSize
	}
	if p.templates, err = r.table("templates", &blobs); err != nil {
		return nil, err
	}
	if p.files, err = r.table("files", &blobs); err != nil {
		return nil, err
	}
	if version == chartVersionTimes {
		if err := r.modTimes(p); err != nil {
			return nil, err
		}
	}
	if blobs != len(r.b) {
		return nil, fmt.Errorf("%w: file sizes add up to %d bytes, the part holds %d", errChart, blobs, len(r.b))
	}
	if err := json.Unmarshal(metadataJSON, metadata); err != nil {
		return nil, fmt.Errorf("%w metadata: %v", errChart, err)
	}
	if err := json.Unmarshal(lockJSON, lock); err != nil {
		return nil, fmt.Errorf("%w lock: %v", errChart, err)
	}
	if p.values, err = readValues(string(values)); err != nil {
		return nil, err
	}
	p.blobData = r.b
	return p, nil
}

// Size returns the size of the part's canonical bytes, for cache accounting.
func (p *Chart) Size() int { return p.size }

// ModTime returns the chart's mod time (Helm 4's Chart.ModTime; zero in a
// part without mod times).
func (p *Chart) ModTime() time.Time { return p.modTime }

// SchemaModTime returns the schema's mod time (Helm 4's
// Chart.SchemaModTime; zero in a part without mod times).
func (p *Chart) SchemaModTime() time.Time { return p.schemaModTime }

// Templates returns the chart's templates, for BuildFiles.
func (p *Chart) Templates() *ChartTable { return &p.templates }

// Files returns the chart's files, for BuildFiles.
func (p *Chart) Files() *ChartTable { return &p.files }
