package helm3codec

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/helmstore/helmstore/internal/codec"

	"helm.sh/helm/v3/pkg/chart"
)

// A chart part is binary, so that its cost is in proportion to its bytes,
// not to its number of files or values:
//
//	'c' 2
//	uvarint(len) metadata JSON       (Helm's JSON of Chart.Metadata)
//	uvarint(len) lock JSON           (Helm's JSON of Chart.Lock)
//	uvarint(len) values              (Chart.Values as a binary tree, below)
//	uvarint(len+1) schema            (0: nil; the bytes are in the blobs)
//	table templates, table files     (names and sizes)
//	blobs: the schema, then every template's and file's data, back to back
//
// where a table is uvarint(n+1) (0: a nil slice) and n entries, each a flag
// byte (0: a nil *File, 1: nil data, 2: data) and, unless nil, uvarint(len)
// name and, for data, uvarint(len). Blobs are the chart's own slices when
// encoding (a chart that is already stored is only hashed, never copied)
// and are copied once, into one buffer, when a chart is built.
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
const chartVersion = 2

const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagNumber
	tagString
	tagMap
	tagList
)

// File table entry flags.
const (
	fileNil    byte = 0 // a nil *chart.File
	fileNoData byte = 1 // a file whose Data is nil
	fileData   byte = 2 // a file with data (possibly empty)
)

// maxValuesDepth is how deep values may nest. Helm's JSON nests values
// three levels below the top of a release (release, chart, values); Go's
// decoder refuses more than codec.MaxJSONDepth levels in all.
const maxValuesDepth = codec.MaxJSONDepth - 2

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// validText returns s with every invalid UTF-8 byte replaced by U+FFFD, as
// encoding/json does.
func validText(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var sb strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			sb.WriteString("\uFFFD")
		} else {
			sb.WriteString(s[i : i+n])
		}
		i += n
	}
	return sb.String()
}

var errValuesDepth = fmt.Errorf("nested deeper than %d levels, which Helm cannot read back", codec.MaxJSONDepth)

// valueEncoder appends values; entries is a stack of the entries of the maps
// being written, reused from one map to the next.
type valueEncoder struct {
	b       []byte
	entries []entry
}

type entry struct {
	k string // as written: valid UTF-8
	o string // the original key
	v interface{}
}

// value appends v, at nesting depth (of maps and lists).
func (e *valueEncoder) value(v interface{}, depth int) error {
	switch t := v.(type) {
	case nil:
		e.b = append(e.b, tagNil)
	case bool:
		if t {
			e.b = append(e.b, tagTrue)
		} else {
			e.b = append(e.b, tagFalse)
		}
	case float64:
		if math.IsNaN(t) || math.IsInf(t, 0) {
			return fmt.Errorf("unsupported value: %v", t)
		}
		e.b = binary.LittleEndian.AppendUint64(append(e.b, tagNumber), math.Float64bits(t))
	case string:
		e.b = appendString(append(e.b, tagString), validText(t))
	case map[string]interface{}:
		if t == nil {
			e.b = append(e.b, tagNil)
			return nil
		}
		if depth++; depth > maxValuesDepth {
			return errValuesDepth
		}
		start := len(e.entries)
		valid := true
		for k, v := range t {
			e.entries = append(e.entries, entry{k: k, o: k, v: v})
			valid = valid && utf8.ValidString(k)
		}
		es := e.entries[start:]
		if valid {
			slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.k, b.k) })
		} else {
			// Keys equal once made valid: JSON keeps the value of the
			// last one in the order of the original keys.
			for i := range es {
				es[i].k = validText(es[i].o)
			}
			slices.SortFunc(es, func(a, b entry) int {
				if c := strings.Compare(a.k, b.k); c != 0 {
					return c
				}
				return strings.Compare(a.o, b.o)
			})
			n := 0
			for i := range es {
				if i+1 < len(es) && es[i+1].k == es[i].k {
					continue
				}
				es[n] = es[i]
				n++
			}
			e.entries = e.entries[:start+n]
		}
		end := len(e.entries)
		e.b = binary.AppendUvarint(append(e.b, tagMap), uint64(end-start))
		for i := start; i < end; i++ {
			// e.entries may grow (and move) while a value is written.
			en := e.entries[i]
			e.b = appendString(e.b, en.k)
			if err := e.value(en.v, depth); err != nil {
				return err
			}
		}
		clear(e.entries[start:end]) // let go of the values
		e.entries = e.entries[:start]
	case []interface{}:
		if t == nil {
			e.b = append(e.b, tagNil)
			return nil
		}
		if depth++; depth > maxValuesDepth {
			return errValuesDepth
		}
		e.b = binary.AppendUvarint(append(e.b, tagList), uint64(len(t)))
		for _, x := range t {
			if err := e.value(x, depth); err != nil {
				return err
			}
		}
	default:
		// Anything else becomes what Helm's JSON round trip makes of it.
		j, err := json.Marshal(v)
		if err != nil {
			return err
		}
		var u interface{}
		if err := json.Unmarshal(j, &u); err != nil {
			return err
		}
		return e.value(u, depth)
	}
	return nil
}

// valueReader decodes values; strings are substrings of s, which holds the
// encoded values.
type valueReader struct {
	s string
}

var errValues = fmt.Errorf("%w: chart values", codec.ErrCorrupt)

func (r *valueReader) uvarint() (int, error) {
	var x uint64
	var shift uint
	for i := 0; i < len(r.s) && i < binary.MaxVarintLen64; i++ {
		c := r.s[i]
		if c < 0x80 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break
			}
			x |= uint64(c) << shift
			r.s = r.s[i+1:]
			if x > uint64(len(r.s)) {
				// Every length and count here is of bytes or of entries
				// of at least one byte each, which must follow.
				return 0, fmt.Errorf("%w: length %d overruns the part", errValues, x)
			}
			return int(x), nil
		}
		x |= uint64(c&0x7f) << shift
		shift += 7
	}
	return 0, fmt.Errorf("%w: bad length", errValues)
}

func (r *valueReader) str() (string, error) {
	n, err := r.uvarint()
	if err != nil {
		return "", err
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s, nil
}

func (r *valueReader) value(depth int) (interface{}, error) {
	if len(r.s) == 0 {
		return nil, fmt.Errorf("%w: truncated", errValues)
	}
	tag := r.s[0]
	r.s = r.s[1:]
	switch tag {
	case tagNil:
		return nil, nil
	case tagFalse:
		return false, nil
	case tagTrue:
		return true, nil
	case tagNumber:
		if len(r.s) < 8 {
			return nil, fmt.Errorf("%w: truncated number", errValues)
		}
		f := math.Float64frombits(binary.LittleEndian.Uint64([]byte(r.s[:8])))
		r.s = r.s[8:]
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%w: number is %v", errValues, f)
		}
		return f, nil
	case tagString:
		s, err := r.str()
		if err != nil {
			return nil, err
		}
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("%w: string is not valid UTF-8", errValues)
		}
		return s, nil
	case tagMap, tagList:
		if depth++; depth > maxValuesDepth {
			return nil, fmt.Errorf("%w: %w", errValues, errValuesDepth)
		}
		n, err := r.uvarint()
		if err != nil {
			return nil, err
		}
		if tag == tagList {
			l := make([]interface{}, n)
			for i := range l {
				if l[i], err = r.value(depth); err != nil {
					return nil, err
				}
			}
			return l, nil
		}
		m := make(map[string]interface{}, n)
		prev := ""
		for i := 0; i < n; i++ {
			k, err := r.str()
			if err != nil {
				return nil, err
			}
			if !utf8.ValidString(k) {
				return nil, fmt.Errorf("%w: key is not valid UTF-8", errValues)
			}
			if i > 0 && k <= prev {
				return nil, fmt.Errorf("%w: keys out of order", errValues)
			}
			prev = k
			if m[k], err = r.value(depth); err != nil {
				return nil, err
			}
		}
		return m, nil
	default:
		return nil, fmt.Errorf("%w: unknown tag %d", errValues, tag)
	}
}

// readValues decodes encoded values, which must be nil or a map.
func readValues(s string) (map[string]interface{}, error) {
	r := &valueReader{s: s}
	if len(s) > 0 && s[0] != tagNil && s[0] != tagMap {
		return nil, fmt.Errorf("%w: not a map", errValues)
	}
	v, err := r.value(0)
	if err != nil {
		return nil, err
	}
	if len(r.s) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errValues, len(r.s))
	}
	m, _ := v.(map[string]interface{})
	return m, nil
}

func appendTable(b []byte, fs []*chart.File) []byte {
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

// encodeChart returns the canonical bytes of c as pieces to be read in
// order: everything but the blobs, then the blobs, which are c's own
// slices (not copied). Most upgrades store a chart that is already stored,
// so its bytes are only hashed, never assembled.
func encodeChart(c *chart.Chart) ([][]byte, error) {
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
	for _, fs := range [][]*chart.File{c.Templates, c.Files} {
		for _, f := range fs {
			if f != nil {
				names += len(f.Name) + 2*binary.MaxVarintLen32
			}
		}
	}
	head := make([]byte, 0, 2+len(metadata)+len(lock)+len(values)+names+5*binary.MaxVarintLen64)
	head = append(head, byte(codec.KindChart), chartVersion)
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
	pieces := make([][]byte, 0, 2+len(c.Templates)+len(c.Files))
	pieces = append(pieces, head, c.Schema)
	for _, fs := range [][]*chart.File{c.Templates, c.Files} {
		for _, f := range fs {
			if f != nil && len(f.Data) > 0 {
				pieces = append(pieces, f.Data)
			}
		}
	}
	return pieces, nil
}

// ChartPart is a decoded, immutable chart part. Chart builds a fresh
// *chart.Chart from it each time, so callers never share mutable state.
type ChartPart struct {
	metadata  *chart.Metadata
	lock      *chart.Lock
	values    map[string]interface{}
	schema    []byte // nil: nil schema
	templates []fileEntry
	files     []fileEntry
	nilTpls   bool   // Templates is a nil slice
	nilFiles  bool   // Files is a nil slice
	blobs     int    // total size of the schema and data blobs
	blobData  []byte // the blobs, back to back, in order
	size      int
}

type fileEntry struct {
	name string
	data []byte
	size int // of data, before it is assigned
	flag byte
}

// chartReader reads the sections of a chart part before its blobs.
type chartReader struct {
	b []byte
}

var errChart = fmt.Errorf("%w: chart", codec.ErrCorrupt)

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

// table reads a file table, adding its blobs' sizes to *blobs.
func (r *chartReader) table(what string, blobs *int) (_ []fileEntry, isNil bool, _ error) {
	n, err := r.uvarint(what)
	if err != nil {
		return nil, false, err
	}
	if n == 0 {
		return nil, true, nil
	}
	n--
	if n > uint64(len(r.b)) { // every entry is at least one byte
		return nil, false, fmt.Errorf("%w %s: %d entries overrun the part", errChart, what, n)
	}
	out := make([]fileEntry, n)
	for i := range out {
		if len(r.b) == 0 {
			return nil, false, fmt.Errorf("%w %s: truncated", errChart, what)
		}
		e := &out[i]
		e.flag = r.b[0]
		r.b = r.b[1:]
		switch e.flag {
		case fileNil:
			continue
		case fileNoData, fileData:
		default:
			return nil, false, fmt.Errorf("%w %s: entry %d: unknown flag %d", errChart, what, i, e.flag)
		}
		name, err := r.bytes(what + " name")
		if err != nil {
			return nil, false, err
		}
		if !utf8.Valid(name) {
			return nil, false, fmt.Errorf("%w %s: entry %d: name is not valid UTF-8", errChart, what, i)
		}
		e.name = string(name)
		if e.flag == fileData {
			size, err := r.uvarint(what + " size")
			if err != nil {
				return nil, false, err
			}
			if size > codec.MaxPartBytes || *blobs+int(size) > codec.MaxPartBytes {
				return nil, false, fmt.Errorf("%w %s %q: %d bytes, more than the part can hold", errChart, what, e.name, size)
			}
			e.size = int(size)
			*blobs += e.size
		}
	}
	return out, false, nil
}

func decodeChart(raw []byte) (*ChartPart, error) {
	if len(raw) < 2 || raw[0] != byte(codec.KindChart) {
		return nil, fmt.Errorf("%w: not a chart part", codec.ErrCorrupt)
	}
	if raw[1] != chartVersion {
		return nil, fmt.Errorf("%w: chart encoding %d", codec.ErrCorrupt, raw[1])
	}
	if len(raw) > codec.MaxPartBytes {
		return nil, fmt.Errorf("%w: chart part of %d bytes, more than the limit of %d", codec.ErrCorrupt, len(raw), codec.MaxPartBytes)
	}
	r := &chartReader{b: raw[2:]}
	p := &ChartPart{size: len(raw)}
	metadata, err := r.bytes("metadata")
	if err != nil {
		return nil, err
	}
	lock, err := r.bytes("lock")
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
	if schema > codec.MaxPartBytes {
		return nil, fmt.Errorf("%w schema: %d bytes, more than the part can hold", errChart, schema-1)
	}
	blobs := 0
	if schema > 0 {
		blobs = int(schema - 1)
	}
	if p.templates, p.nilTpls, err = r.table("templates", &blobs); err != nil {
		return nil, err
	}
	if p.files, p.nilFiles, err = r.table("files", &blobs); err != nil {
		return nil, err
	}
	if blobs != len(r.b) {
		return nil, fmt.Errorf("%w: file sizes add up to %d bytes, the part holds %d", errChart, blobs, len(r.b))
	}
	p.blobs = blobs
	if err := json.Unmarshal(metadata, &p.metadata); err != nil {
		return nil, fmt.Errorf("%w metadata: %v", errChart, err)
	}
	if err := json.Unmarshal(lock, &p.lock); err != nil {
		return nil, fmt.Errorf("%w lock: %v", errChart, err)
	}
	if p.values, err = readValues(string(values)); err != nil {
		return nil, err
	}
	p.blobData = r.b
	b := r.b
	if schema > 0 {
		p.schema, b = b[:schema-1:schema-1], b[schema-1:]
	}
	for _, es := range [][]fileEntry{p.templates, p.files} {
		for i := range es {
			if es[i].flag == fileData {
				es[i].data, b = b[:es[i].size:es[i].size], b[es[i].size:]
			}
		}
	}
	return p, nil
}

// Size returns the size of the part's canonical bytes, for cache accounting.
func (p *ChartPart) Size() int { return p.size }

// Chart returns a new chart with its own copies of every field.
func (p *ChartPart) Chart() (*chart.Chart, error) { return p.ChartOn(p.share()) }

// Shared is what the charts ChartOn builds from one Share have in common: a
// copy of the part's values and of its file bytes (files, templates and
// schema back to back, in order: one allocation, not cleared first).
type Shared struct {
	part   *ChartPart
	files  []byte
	values map[string]interface{}
}

// Share copies the part's values and file bytes for ChartOn (a *Shared).
func (p *ChartPart) Share() any { return p.share() }

func (p *ChartPart) share() *Shared {
	return &Shared{part: p, files: append([]byte(nil), p.blobData...), values: codec.CloneMap(p.values)}
}

// Adopt is Share without copying: the Shared holds the part's own values
// and file bytes. Only for a part that nothing else holds or will build a
// chart from again (a part read for one call and not cached), so that a
// cold read does not copy a chart it is about to drop.
func (p *ChartPart) Adopt() any {
	return &Shared{part: p, files: p.blobData, values: p.values}
}

// ChartOn is Chart, but the returned chart's values map and its files' bytes
// are those of sh, a Share of p: charts built on one Share share them (and
// nothing else: each has its own metadata, lock and File values). The
// engine builds the releases of one call that have one chart this way, as
// Helm's Memory driver returns shared objects; never across calls.
func (p *ChartPart) ChartOn(sh *Shared) (*chart.Chart, error) {
	if sh == nil || sh.part != p {
		return nil, errors.New("chart: ChartOn with another part's Share")
	}
	c := &chart.Chart{Metadata: cloneMetadata(p.metadata), Lock: cloneLock(p.lock), Values: sh.values}
	buf := sh.files
	take := func(d []byte) []byte {
		if len(d) == 0 {
			return []byte{}
		}
		out := buf[:len(d):len(d)]
		buf = buf[len(d):]
		return out
	}
	if p.schema != nil {
		c.Schema = take(p.schema)
	}
	files := func(es []fileEntry, isNil bool) []*chart.File {
		if isNil {
			return nil
		}
		out := make([]*chart.File, len(es))
		fs := make([]chart.File, len(es))
		for i, e := range es {
			switch e.flag {
			case fileNil:
				continue
			case fileData:
				fs[i].Data = take(e.data)
			}
			fs[i].Name = e.name
			out[i] = &fs[i]
		}
		return out
	}
	c.Templates = files(p.templates, p.nilTpls)
	c.Files = files(p.files, p.nilFiles)
	return c, nil
}

// Name returns the chart's name and version from its metadata, for summaries.
func (p *ChartPart) Name() (name, version string) {
	if p.metadata == nil {
		return "", ""
	}
	return p.metadata.Name, p.metadata.Version
}

// cloneMetadata deep-copies metadata decoded from JSON. (A test checks that
// every field of a reference type is copied here.)
func cloneMetadata(m *chart.Metadata) *chart.Metadata {
	if m == nil {
		return nil
	}
	c := *m
	c.Sources = slices.Clone(m.Sources)
	c.Keywords = slices.Clone(m.Keywords)
	if m.Maintainers != nil {
		c.Maintainers = make([]*chart.Maintainer, len(m.Maintainers))
		for i, x := range m.Maintainers {
			if x != nil {
				y := *x
				c.Maintainers[i] = &y
			}
		}
	}
	c.Annotations = maps.Clone(m.Annotations)
	c.Dependencies = cloneDependencies(m.Dependencies)
	return &c
}

func cloneDependencies(ds []*chart.Dependency) []*chart.Dependency {
	if ds == nil {
		return nil
	}
	out := make([]*chart.Dependency, len(ds))
	for i, d := range ds {
		if d != nil {
			c := *d
			c.Tags = slices.Clone(d.Tags)
			c.ImportValues, _ = codec.CloneValue(d.ImportValues).([]interface{})
			out[i] = &c
		}
	}
	return out
}

func cloneLock(l *chart.Lock) *chart.Lock {
	if l == nil {
		return nil
	}
	c := *l
	c.Dependencies = cloneDependencies(l.Dependencies)
	return &c
}
