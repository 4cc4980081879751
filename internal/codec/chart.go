package codec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"time"
)

// A chart part is binary, so that its cost is in proportion to its bytes,
// not to its number of files or values. Every face writes a chart the same
// way (a chart written through Helm 3 and through Helm 4 is stored once):
//
//	'c' version                      (2, or 3 when a chart has mod times)
//	uvarint(len) metadata JSON       (Helm's JSON of Chart.Metadata)
//	uvarint(len) lock JSON           (Helm's JSON of Chart.Lock)
//	uvarint(len) values              (Chart.Values as a binary tree, below)
//	uvarint(len+1) schema            (0: nil; the bytes are in the blobs)
//	table templates, table files     (names and sizes)
//	version 3 only: mod times        (charttime.go)
//	blobs: the schema, then every template's and file's data, back to back
//
// where a table is uvarint(n+1) (0: a nil slice) and n entries, each a flag
// byte (0: a nil *File, 1: nil data, 2: data) and, unless nil, uvarint(len)
// name and, for data, uvarint(len). Blobs are the chart's own slices when
// encoding (a chart that is already stored is only hashed, never copied)
// and are copied once, into one buffer, when a chart is built.
//
// A chart with no mod time (every chart of Helm 3, which has none) is
// version 2; one with any (Helm 4's Chart.ModTime, SchemaModTime and
// File.ModTime) is version 3, which adds them before the blobs. Every face
// reads both; one whose Helm has no mod times ignores them, as Helm's own
// JSON does.
//
// Values are what Helm's JSON round trip of them gives: numbers are float64,
// and anything that is not a JSON-decoded tree (ints, []string, structs,
// ...) goes through encoding/json on the way in, as in Helm. A value is a
// tag byte:
//
//	0 nil, 1 false, 2 true
//	3 float64: 8 bytes, little-endian IEEE 754
//	4 string: uvarint(len) bytes (valid UTF-8: invalid bytes become U+FFFD, as in JSON)
//	5 map: uvarint(len) entries, each uvarint(len) key, value; keys made
//	  valid UTF-8 and in strictly increasing byte order (of keys equal once
//	  made valid, the value of the greatest original key is kept, as in JSON)
//	6 list: uvarint(len) values
//
// Nil versus empty is kept for every slice and map, so a decoded chart
// deep-equals Helm's own JSON round trip of it. Raw and dependencies are
// not kept, as Helm's JSON does not keep them.
const (
	chartVersion      = 2 // no mod times
	chartVersionTimes = 3 // with mod times
)

// File table entry flags.
const (
	fileNil    byte = 0 // a nil file
	fileNoData byte = 1 // a file whose Data is nil
	fileData   byte = 2 // a file with data (possibly empty)
)

// ChartFile is a chart's template or file as a face gives it to EncodeChart.
type ChartFile struct {
	Name    string
	Data    []byte
	ModTime time.Time // zero for none (Helm 3)
}

// ChartFields is a chart as a face describes it to EncodeChart: Helm's
// chart type, field by field, with the Helm types left to encoding/json.
// Nothing is copied from it.
type ChartFields struct {
	// Metadata and Lock are encoded with encoding/json, as Helm's JSON of
	// the chart holds them.
	Metadata, Lock any
	Values         map[string]interface{}
	Schema         []byte
	// ModTime and SchemaModTime are Helm 4's; zero for none. A time is kept
	// as Helm's JSON keeps it (time.Time's MarshalJSON): its instant and
	// its offset from UTC to the minute, not its location's name.
	ModTime, SchemaModTime time.Time
	// Templates and Files keep nil versus empty; a nil entry is a nil file.
	Templates, Files []*ChartFile
}

// ChartFilesOf describes a face's files for ChartFields (nil for nil, a nil
// entry for a nil file), with of giving each non-nil file's fields: two
// allocations, whatever the number of files.
func ChartFilesOf[F any](fs []*F, of func(*F) ChartFile) []*ChartFile {
	if fs == nil {
		return nil
	}
	out := make([]*ChartFile, len(fs))
	slab := make([]ChartFile, len(fs))
	for i, f := range fs {
		if f != nil {
			slab[i] = of(f)
			out[i] = &slab[i]
		}
	}
	return out
}

func appendTable(b []byte, fs []*ChartFile) []byte {
	if fs == nil {
		return append(b, 0)
	}
	b = binary.AppendUvarint(b, uint64(len(fs))+1)
	for _, f := range fs {
		switch {
		case f == nil:
			b = append(b, fileNil)
		case f.Data == nil:
			b = appendString(append(b, fileNoData), validText(f.Name))
		default:
			b = appendString(append(b, fileData), validText(f.Name))
			b = binary.AppendUvarint(b, uint64(len(f.Data)))
		}
	}
	return b
}

// EncodeChart returns the canonical bytes of c as pieces to be read in
// order: everything but the blobs, then the blobs, which are c's own
// slices (not copied). Most upgrades store a chart that is already stored,
// so its bytes are only hashed, never assembled.
func EncodeChart(c *ChartFields) ([][]byte, error) {
	metadata, err := json.Marshal(c.Metadata)
	if err != nil {
		return nil, fmt.Errorf("chart metadata: %w", err)
	}
	lock, err := json.Marshal(c.Lock)
	if err != nil {
		return nil, fmt.Errorf("chart lock: %w", err)
	}
	ve := &valueEncoder{b: make([]byte, 0, 4096)}
	if err := ve.value(c.Values, 0); err != nil {
		return nil, fmt.Errorf("chart values: %w", err)
	}
	values := ve.b
	names := 0
	for _, fs := range [][]*ChartFile{c.Templates, c.Files} {
		for _, f := range fs {
			if f != nil {
				names += len(f.Name) + 2*binary.MaxVarintLen32
			}
		}
	}
	version := byte(chartVersion)
	if hasModTimes(c) {
		version = chartVersionTimes
	}
	head := make([]byte, 0, 2+len(metadata)+len(lock)+len(values)+names+5*binary.MaxVarintLen64)
	head = append(head, byte(KindChart), version)
	head = appendString(head, string(metadata))
	head = appendString(head, string(lock))
	head = appendString(head, string(values))
	if c.Schema == nil {
		head = append(head, 0)
	} else {
		head = binary.AppendUvarint(head, uint64(len(c.Schema))+1)
	}
	head = appendTable(head, c.Templates)
	head = appendTable(head, c.Files)
	if version == chartVersionTimes {
		if head, err = appendModTimes(head, c); err != nil {
			return nil, err
		}
	}
	pieces := make([][]byte, 0, 2+len(c.Templates)+len(c.Files))
	pieces = append(pieces, head, c.Schema)
	for _, fs := range [][]*ChartFile{c.Templates, c.Files} {
		for _, f := range fs {
			if f != nil && len(f.Data) > 0 {
				pieces = append(pieces, f.Data)
			}
		}
	}
	return pieces, nil
}
