package redis

import (
	"slices"
	"testing"
)

// An index field packs any bytes, and unpacks to what was packed, with the
// summary or without; whatever a damaged value holds, unpacking it neither
// panics nor reads past it, and what it accepts packs back to the same
// value.
func FuzzIndex(f *testing.F) {
	f.Add(packIndex("app", "3", "deployed", "helm", "1700000000", "", "{}"))
	f.Add(packIndex("app", "3", "deployed", "helm", "1700000000", "1700000001", `{"a":"b:c"}`, "chart", "1.0.0", "", "2024-01-01T00:00:00Z", "12:34 ok"))
	f.Add("")
	f.Add("4:name")
	f.Add("-1:")
	f.Add("04:name")
	f.Add("99999999999999999999:x")
	f.Fuzz(func(t *testing.T, v string) {
		var x index
		if p := x.unpack(v); p != nil {
			if x != (index{}) {
				t.Fatalf("unpack(%q) failed (%v) and set %+v", v, p, x)
			}
			return
		}
		n := iChartName
		if x.hasMarker {
			n = nItems
		}
		if !slices.Equal(x.has[:n], slices.Repeat([]bool{true}, n)) || slices.Contains(x.has[n:], true) {
			t.Fatalf("unpack(%q) has %v", v, x.has)
		}
		if got := packIndex(x.v[:n]...); got != v {
			t.Fatalf("unpack(%q) packs back as %q", v, got)
		}
	})
}
