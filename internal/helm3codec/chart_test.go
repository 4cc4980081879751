package helm3codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"

	"github.com/helmstore/helmstore/internal/testing/cputime"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

var stack = sync.OnceValue(func() *fixture.Stack { return fixture.NewStack(1) })

// cpuPerOp runs fn b.N times and reports, beside the elapsed time, the
// process's CPU time per operation (cpu-ns/op; GC included).
func cpuPerOp(b *testing.B, fn func()) {
	b.ReportAllocs()
	b.ResetTimer()
	stop := cputime.Start(b, "cpu-ns/op")
	for i := 0; i < b.N; i++ {
		fn()
	}
	b.StopTimer()
	stop()
}

// BenchmarkChartEncode is what Create spends on the chart of the 2.2 MB
// kube-prometheus-stack-shaped release: its canonical bytes and their digest
// (no compression: the store already holds it).
func BenchmarkChartEncode(b *testing.B) {
	c := stack().Chart()
	cpuPerOp(b, func() {
		pieces, err := encodeChart(c)
		if err != nil {
			b.Fatal(err)
		}
		newPart(KindChart, pieces)
	})
}

func stackChartPart(b testing.TB) *Part {
	pieces, err := encodeChart(stack().Chart())
	if err != nil {
		b.Fatal(err)
	}
	return newPart(KindChart, pieces)
}

// BenchmarkChartOpen is what a cold read spends on that chart once it has
// its stored frame: decompress, verify the digest, decode, build the chart.
func BenchmarkChartOpen(b *testing.B) {
	p := stackChartPart(b)
	frame := p.Frame()
	cpuPerOp(b, func() {
		raw, err := Open(frame, p.Digest)
		if err != nil {
			b.Fatal(err)
		}
		d, err := DecodePart(KindChart, raw)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := chartOf(d); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkChartDecode is DecodePart alone on the chart's canonical bytes.
func BenchmarkChartDecode(b *testing.B) {
	raw := stackChartPart(b).Raw()
	cpuPerOp(b, func() {
		if _, err := DecodePart(KindChart, raw); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkChartBuild is building a release's chart from a decoded (cached)
// part: what History pays per revision.
func BenchmarkChartBuild(b *testing.B) {
	d, err := DecodePart(KindChart, stackChartPart(b).Raw())
	if err != nil {
		b.Fatal(err)
	}
	cpuPerOp(b, func() {
		if _, err := chartOf(d); err != nil {
			b.Fatal(err)
		}
	})
}

// helmChart is Helm's JSON round trip of c: what Helm's drivers give back.
func helmChart(t testing.TB, c *chart.Chart) *chart.Chart { return helmJSON(t, c) }

func chartRoundTrip(t testing.TB, c *chart.Chart) *chart.Chart {
	t.Helper()
	pieces, err := encodeChart(c)
	if err != nil {
		t.Fatal(err)
	}
	p := newPart(KindChart, pieces)
	d, err := DecodePart(KindChart, p.Raw())
	if err != nil {
		t.Fatal(err)
	}
	got, err := chartOf(d)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

type namedValues map[string]interface{}

func edgeCharts() map[string]*chart.Chart {
	deep := map[string]interface{}{}
	cur := deep
	for i := 0; i < 500; i++ {
		next := map[string]interface{}{}
		cur["k"] = []interface{}{next}
		cur = next
	}
	return map[string]*chart.Chart{
		"stack": stack().Chart(),
		"zero":  {},
		"empty": {Metadata: &chart.Metadata{}, Lock: &chart.Lock{}, Values: map[string]interface{}{}, Schema: []byte{}, Templates: []*chart.File{}, Files: []*chart.File{}},
		"odd files": {
			Templates: []*chart.File{nil, {Name: "nil-data"}, {Name: "empty", Data: []byte{}}, {Name: "t\xffbad\xc3", Data: []byte("x")}, {Name: "", Data: []byte("no name")}},
			Files:     []*chart.File{{Name: "f", Data: []byte{0, 1, 2, 0xff}}, nil},
			Schema:    []byte(`{"type":"object"}`),
		},
		"all empty data": {Templates: []*chart.File{{Name: "a", Data: []byte{}}}, Files: []*chart.File{{Name: "b", Data: []byte{}}}},
		"values types": {Values: map[string]interface{}{
			"int": 1, "int64": int64(1 << 60), "uint8": uint8(7), "float32": float32(1.5), "neg zero": math.Copysign(0, -1),
			"strings": []string{"a", "b"}, "string map": map[string]string{"x": "y"}, "named": namedValues{"n": 1, "m": []int{1, 2}},
			"struct": struct {
				A int `json:"a"`
				B string
			}{1, "b"}, "nil map": map[string]interface{}(nil), "nil list": []interface{}(nil), "nil strings": []string(nil),
			"bad \xff string": "v\xffw\xc3", "html": "<&>\u2028", "number": json.Number("12.5"), "bytes": []byte("hi"),
			"empty": map[string]interface{}{}, "list": []interface{}{}, "nested": map[string]interface{}{"a": []interface{}{1.0, "2", nil, true, false, map[string]interface{}{}}},
			// Equal once made valid UTF-8: JSON keeps the greater key's value.
			"dup\xff": "first", "dup\xfe": "second", "dup\uFFFD": "third",
		}},
		"deep values": {Values: deep},
		"full metadata": {Metadata: fullMetadata(), Lock: &chart.Lock{Generated: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), Digest: "d",
			Dependencies: []*chart.Dependency{nil, {Name: "a", Tags: []string{}, ImportValues: []interface{}{}}}}},
	}
}

func fullMetadata() *chart.Metadata {
	return &chart.Metadata{Name: "n", Home: "h", Sources: []string{"s"}, Version: "1", Description: "d", Keywords: []string{"k"},
		Maintainers: []*chart.Maintainer{{Name: "m", Email: "e", URL: "u"}, nil}, Icon: "i", APIVersion: "v2", Condition: "c", Tags: "t",
		AppVersion: "a", Deprecated: true, Annotations: map[string]string{"a": "b"}, KubeVersion: ">=1", Type: "library",
		Dependencies: []*chart.Dependency{{Name: "d", Version: "1", Repository: "r", Condition: "c", Tags: []string{"t"}, Enabled: true,
			ImportValues: []interface{}{"x", map[string]interface{}{"child": "c", "parent": []interface{}{"p"}}}, Alias: "al"}}}
}

// TestChartMetadataCopied checks that cloneMetadata and cloneLock know every
// field of a reference type in Helm's chart metadata types: a field Helm
// adds must be deep-copied there too.
func TestChartMetadataCopied(t *testing.T) {
	t.Parallel()
	copied := map[string]bool{
		"Metadata.Sources": true, "Metadata.Keywords": true, "Metadata.Maintainers": true, "Metadata.Annotations": true,
		"Metadata.Dependencies": true, "Dependency.Tags": true, "Dependency.ImportValues": true, "Lock.Dependencies": true,
	}
	for _, typ := range []reflect.Type{reflect.TypeOf(chart.Metadata{}), reflect.TypeOf(chart.Maintainer{}), reflect.TypeOf(chart.Dependency{}), reflect.TypeOf(chart.Lock{})} {
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			name := typ.Name() + "." + f.Name
			switch f.Type.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface, reflect.Array, reflect.Struct, reflect.Chan, reflect.Func:
				if f.Type == reflect.TypeOf(time.Time{}) {
					continue
				}
				if !copied[name] {
					t.Errorf("%s (%s) is not deep-copied by cloneMetadata or cloneLock", name, f.Type)
				}
				delete(copied, name)
			}
		}
	}
	for name := range copied {
		t.Errorf("%s is no longer a field of a reference type", name)
	}
	d, err := DecodePart(KindChart, newPart(KindChart, mustEncode(t, edgeCharts()["full metadata"])).Raw())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := chartOf(d)
	want := helmChart(t, a)
	a.Metadata.Sources[0], a.Metadata.Keywords[0], a.Metadata.Maintainers[0].Name = "x", "x", "x"
	a.Metadata.Annotations["a"] = "x"
	a.Metadata.Dependencies[0].Tags[0] = "x"
	a.Metadata.Dependencies[0].ImportValues[1].(map[string]interface{})["child"] = "x"
	a.Metadata.Dependencies[0].ImportValues[1].(map[string]interface{})["parent"].([]interface{})[0] = "x"
	a.Lock.Dependencies[1].Name = "x"
	if b, _ := chartOf(d); !reflect.DeepEqual(b, want) {
		t.Fatal("changing the metadata of one chart built from a part changed the next")
	}
}

func mustEncode(t testing.TB, c *chart.Chart) [][]byte {
	t.Helper()
	pieces, err := encodeChart(c)
	if err != nil {
		t.Fatal(err)
	}
	return pieces
}

func TestChartRoundTripMatchesHelmJSON(t *testing.T) {
	t.Parallel()
	for name, c := range edgeCharts() {
		t.Run(name, func(t *testing.T) {
			want, got := helmChart(t, c), chartRoundTrip(t, c)
			if !reflect.DeepEqual(got, want) {
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(want)
				t.Fatalf("round trip differs from Helm's:\n got %.800s\nwant %.800s", gb, wb)
			}
		})
	}
}

func TestChartEncodingIsCanonical(t *testing.T) {
	t.Parallel()
	for name, c := range edgeCharts() {
		a, err := encodeChart(c)
		if err != nil {
			t.Fatal(err)
		}
		// Helm's round trip of c is the same chart: the same bytes.
		b, err := encodeChart(helmChart(t, c))
		if err != nil {
			t.Fatal(err)
		}
		if pa, pb := newPart(KindChart, a), newPart(KindChart, b); pa.Digest != pb.Digest {
			t.Errorf("%s: digest changes over Helm's JSON round trip:\n%q\n%q", name, pa.Raw()[:min(200, pa.Size)], pb.Raw()[:min(200, pb.Size)])
		}
	}
}

func TestChartIsNotShared(t *testing.T) {
	t.Parallel()
	d, err := DecodePart(KindChart, stackChartPart(t).Raw())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := chartOf(d)
	want := helmChart(t, a)
	a.Templates[0].Data[0] = '!'
	a.Files[3].Data[10] = '!'
	a.Values["prometheus"].(map[string]interface{})["new"] = 1
	a.Values["extraManifests"] = "changed"
	a.Metadata.Name = "changed"
	a.Metadata.Maintainers[0].Name = "changed"
	a.Lock.Dependencies[0].Name = "changed"
	b, _ := chartOf(d)
	if !reflect.DeepEqual(b, want) {
		t.Fatal("changing one chart built from a part changed the next")
	}
}

func TestChartValuesRefused(t *testing.T) {
	t.Parallel()
	deep := map[string]interface{}{}
	cur := deep
	for i := 0; i < MaxJSONDepth; i++ {
		next := map[string]interface{}{}
		cur["k"] = next
		cur = next
	}
	for name, v := range map[string]map[string]interface{}{
		"NaN": {"x": math.NaN()}, "Inf": {"x": []interface{}{math.Inf(1)}}, "too deep": deep,
		"channel": {"c": make(chan int)},
	} {
		if _, err := encodeChart(&chart.Chart{Values: v}); err == nil {
			t.Errorf("%s: no error", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestChartDamage decodes every truncation and many garbled copies of
// chart parts: each is an error wrapping ErrCorrupt or a chart (the digest,
// checked before decoding, is what catches damaged data), never a panic.
func TestChartDamage(t *testing.T) {
	t.Parallel()
	small, err := encodeChart(edgeCharts()["odd files"])
	if err != nil {
		t.Fatal(err)
	}
	vals, err := encodeChart(edgeCharts()["values types"])
	if err != nil {
		t.Fatal(err)
	}
	big := stackChartPart(t).Raw()
	r := rand.New(rand.NewPCG(1, 2))
	for _, raw := range [][]byte{newPart(KindChart, small).Raw(), newPart(KindChart, vals).Raw(), big[:min(len(big), 200000)]} {
		try := func(b []byte) {
			t.Helper()
			d, err := DecodePart(KindChart, b)
			if err != nil {
				if !errors.Is(err, ErrCorrupt) {
					t.Fatalf("%d bytes: error %v does not wrap ErrCorrupt", len(b), err)
				}
				return
			}
			if _, err := chartOf(d); err != nil && !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
		}
		step := max(1, len(raw)/3000)
		for n := 0; n < len(raw); n += step {
			try(raw[:n])
		}
		for i := 0; i < 3000; i++ {
			b := bytes.Clone(raw)
			for j := 0; j < 1+r.IntN(3); j++ {
				// Mostly in the part's sections before the blobs.
				at := r.IntN(min(len(b), 4000))
				if r.IntN(4) == 0 {
					at = r.IntN(len(b))
				}
				b[at] = byte(r.IntN(256))
			}
			try(b)
		}
	}
	// Specific damage, with the problem named.
	for name, tc := range map[string]struct {
		raw  []byte
		want string
	}{
		"version":        {[]byte{'c', 1, 0}, "chart encoding 1"},
		"no metadata":    {[]byte{'c', 2, 0, 0, 0, 0, 0, 0}, "chart metadata: unexpected end"},
		"long metadata":  {[]byte{'c', 2, 9, 'n', 'u', 'l', 'l'}, "metadata: 9 bytes overrun"},
		"huge table":     {chartBytes(nil, 0, 0xff, 0xff, 0xff, 0xff, 0x0f), "entries overrun"},
		"bad flag":       {chartBytes(nil, 0, 2, 7, 0), "entry 0: unknown flag 7"},
		"huge file":      {chartBytes(nil, 0, 2, 2, 1, 'a', 0xff, 0xff, 0xff, 0xff, 0x0f, 0), "more than the part can hold"},
		"missing blobs":  {chartBytes(nil, 0, 2, 2, 1, 'a', 5, 0), "add up to 5 bytes, the part holds 0"},
		"extra bytes":    {chartBytes(nil, 0, 0, 0, 'x'), "add up to 0 bytes, the part holds 1"},
		"values not map": {chartBytes([]byte{tagTrue}, 0, 0, 0), "not a map"},
		"bad tag":        {chartBytes([]byte{tagMap, 1, 1, 'k', 9}, 0, 0, 0), "unknown tag 9"},
		"keys unordered": {chartBytes([]byte{tagMap, 2, 1, 'b', tagNil, 1, 'a', tagNil}, 0, 0, 0), "keys out of order"},
		"bad name":       {chartBytes(nil, 0, 2, 1, 1, 0xff, 0), "name is not valid UTF-8"},
		"bad string":     {chartBytes([]byte{tagMap, 1, 1, 'k', tagString, 1, 0xff}, 0, 0, 0), "not valid UTF-8"},
		"NaN":            {chartBytes([]byte{tagMap, 1, 1, 'k', tagNumber, 1, 0, 0, 0, 0, 0, 0xf8, 0x7f}, 0, 0, 0), "number is NaN"},
		"short number":   {chartBytes([]byte{tagMap, 1, 1, 'k', tagNumber, 1, 0}, 0, 0, 0), "truncated number"},
		"huge list":      {chartBytes([]byte{tagMap, 1, 1, 'k', tagList, 0xff, 0xff, 0xff, 0xff, 0x0f}, 0, 0, 0), "overruns the part"},
		"trailing":       {chartBytes([]byte{tagNil, tagNil}, 0, 0, 0), "1 trailing bytes"},
		"deep values":    {chartBytes(append(append([]byte{tagMap, 1, 1, 'k'}, bytes.Repeat([]byte{tagList, 1}, MaxJSONDepth)...), tagNil), 0, 0, 0), "nested deeper"},
	} {
		_, err := DecodePart(KindChart, tc.raw)
		if err == nil || !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one wrapping ErrCorrupt saying %q", name, err, tc.want)
		}
	}
}

// chartBytes returns a chart part with null metadata and lock, values, and
// then rest.
func chartBytes(values []byte, rest ...byte) []byte {
	b := []byte{'c', 2, 4, 'n', 'u', 'l', 'l', 4, 'n', 'u', 'l', 'l'}
	b = binary.AppendUvarint(b, uint64(len(values)))
	return append(append(b, values...), rest...)
}

func FuzzDecodeChart(f *testing.F) {
	for _, c := range edgeCharts() {
		if c == stack().Chart() {
			continue
		}
		pieces, err := encodeChart(c)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(newPart(KindChart, pieces).Raw())
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := DecodePart(KindChart, raw)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		c, err := chartOf(d)
		if err != nil {
			return
		}
		// What decodes encodes again, to the same chart.
		pieces, err := encodeChart(c)
		if err != nil {
			t.Fatal(err)
		}
		d2, err := DecodePart(KindChart, newPart(KindChart, pieces).Raw())
		if err != nil {
			t.Fatal(err)
		}
		if c2, err := chartOf(d2); err != nil || !reflect.DeepEqual(c2, c) {
			t.Fatalf("decoded chart does not round-trip: %v", err)
		}
	})
}
