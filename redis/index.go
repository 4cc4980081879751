package redis

import (
	"fmt"
	"strconv"
	"strings"
)

// The positions of the items of a head's index field (fIndex): the index
// fields, then the summary's, which a head written without its summary
// lacks.
const (
	iName = iota
	iVersion
	iStatus
	iOwner
	iCreated
	iModified
	iLabels
	iChartName
	iChartVersion
	iAppVersion
	iUpdated
	iDescription
	nItems
)

// indexItems are the fields the index field packs, at their positions. A
// head written before the index was packed holds them as fields of their
// own.
var indexItems = [nItems]string{fName, fVersion, fStatus, fOwner, fCreated, fModified, fLabels,
	fChartName, fChartVersion, fAppVersion, fUpdated, fDescription}

// headIndexFields are the index fields (the first items), summaryFields
// the summary's.
var (
	headIndexFields = indexItems[:iChartName]
	summaryFields   = indexItems[iChartName:]
)

// index is what a head holds of its index fields and summary, as stored:
// each item, whether it is there, and the summary marker (fSummary) of a
// head whose fields are not packed.
type index struct {
	v         [nItems]string
	has       [nItems]bool
	marker    string
	hasMarker bool
}

// packIndex returns the value of a head's index field for items, the
// values of indexItems in order (all of them, or the index fields alone):
// each item as its length in bytes (decimal), a colon and its bytes, so
// that any bytes may be in an item and a damaged value is told from a
// whole one.
func packIndex(items ...string) string {
	var b strings.Builder
	n := 0
	for _, it := range items {
		n += len(it) + 4
	}
	b.Grow(n)
	for _, it := range items {
		b.WriteString(strconv.Itoa(len(it)))
		b.WriteByte(':')
		b.WriteString(it)
	}
	return b.String()
}

// unpack reads v, the value of an index field, into x, returning what does
// not parse (then x holds none of it). Packed with the summary, the
// summary marker is set.
func (x *index) unpack(v string) []string {
	var items [nItems]string
	n := 0
	for rest := v; rest != ""; n++ {
		colon := strings.IndexByte(rest, ':')
		if colon <= 0 || rest[0] == '+' || rest[0] == '-' || rest[0] == '0' && colon > 1 {
			return []string{fmt.Sprintf("field %s does not parse after %d items", fIndex, n)}
		}
		size, err := strconv.Atoi(rest[:colon])
		if err != nil || size > len(rest)-colon-1 {
			return []string{fmt.Sprintf("field %s does not parse after %d items", fIndex, n)}
		}
		if n == nItems {
			return []string{fmt.Sprintf("field %s holds more than %d items", fIndex, nItems)}
		}
		items[n] = rest[colon+1 : colon+1+size]
		rest = rest[colon+1+size:]
	}
	if n != iChartName && n != nItems {
		return []string{fmt.Sprintf("field %s holds %d items, not %d or %d", fIndex, n, iChartName, nItems)}
	}
	x.v = items
	for i := range n {
		x.has[i] = true
	}
	if n == nItems {
		x.marker, x.hasMarker = "1", true
	}
	return nil
}

// indexOf returns the index of a head's stored fields m: unpacked from its
// index field if it has one, else its fields as they are; and what does
// not parse.
func indexOf(m map[string]string) (x *index, problems []string) {
	x = &index{}
	if v, ok := m[fIndex]; ok {
		return x, x.unpack(v)
	}
	for i, f := range indexItems {
		x.v[i], x.has[i] = m[f]
	}
	x.marker, x.hasMarker = m[fSummary]
	return x, nil
}
