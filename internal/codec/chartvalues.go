package codec

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// A chart's values are written as a binary tree (the format is in chart.go):
// a value is a tag byte and what the tag says follows.
const (
	tagNil byte = iota
	tagFalse
	tagTrue
	tagNumber
	tagString
	tagMap
	tagList
)

// maxValuesDepth is how deep values may nest. Helm's JSON nests values
// three levels below the top of a release (release, chart, values); Go's
// decoder refuses more than MaxJSONDepth levels in all.
const maxValuesDepth = MaxJSONDepth - 2

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

var errValuesDepth = fmt.Errorf("nested deeper than %d levels, which Helm cannot read back", MaxJSONDepth)

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

var errValues = fmt.Errorf("%w: chart values", ErrCorrupt)

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
