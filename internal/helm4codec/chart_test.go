package helm4codec

import (
	"encoding/json"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	chart3 "helm.sh/helm/v3/pkg/chart"
	release3 "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/helm3codec"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// jsonAs is Helm's JSON round trip of v into a T: what a Helm driver of T's
// version reads back of what one of v's version wrote.
func jsonAs[T any](t testing.TB, v any) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	return out
}

var stack3 = sync.OnceValue(func() *chart3.Chart { return fixture.NewStack(1).Chart() })

// stack is the fixture's kube-prometheus-stack-shaped chart as Helm 4 reads
// it (no mod times).
func stack(t testing.TB) *chartv2.Chart { return jsonAs[chartv2.Chart](t, stack3()) }

// stamped is the stack with mod times: stamped as Helm 4 stamps a chart it
// packages, then some files apart, in other zones.
func stamped(t testing.TB) *chartv2.Chart {
	c := stack(t)
	c.StampModTimes(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	base := time.Date(2026, 4, 2, 8, 30, 15, 250, time.UTC)
	c.Templates[0].ModTime = base.In(time.Local)
	c.Templates[1].ModTime = base.In(time.FixedZone("CEST", 2*3600))
	c.Files[0].ModTime = base.Add(time.Second).In(time.FixedZone("", -(5*3600 + 1800)))
	c.Files[1].ModTime = time.Time{}
	return c
}

func edgeCharts(t testing.TB) map[string]*chartv2.Chart {
	at := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	zeroInZone := time.Time{}.In(time.FixedZone("Z1", 3600))
	return map[string]*chartv2.Chart{
		"stack":   stack(t),
		"stamped": stamped(t),
		"zero":    {},
		"empty": {Metadata: &chartv2.Metadata{}, Lock: &chartv2.Lock{}, Values: map[string]any{}, Schema: []byte{},
			Templates: []*common.File{}, Files: []*common.File{}},
		"odd files": {
			Templates: []*common.File{nil, {Name: "nil-data", ModTime: at}, {Name: "empty", Data: []byte{}}, {Name: "t\xffbad\xc3", Data: []byte("x"), ModTime: at},
				{Name: "", Data: []byte("no name"), ModTime: at.In(time.FixedZone("LMT", 1172))}},
			Files:  []*common.File{{Name: "f", Data: []byte{0, 1, 2, 0xff}, ModTime: zeroInZone}, nil},
			Schema: []byte(`{"type":"object"}`), SchemaModTime: at.Add(time.Hour),
		},
		"schema time in a zone": {Schema: []byte("{}"), SchemaModTime: zeroInZone, ModTime: zeroInZone},
		"only chart time":       {ModTime: at.In(time.Local)},
		"values types": {Values: map[string]any{
			"int": 1, "float32": float32(1.5), "neg zero": math.Copysign(0, -1), "strings": []string{"a", "b"},
			"nil map": map[string]any(nil), "nil list": []any(nil), "bad \xff string": "v\xffw\xc3", "bytes": []byte("hi"),
			"nested": map[string]any{"a": []any{1.0, "2", nil, true, false, map[string]any{}}},
		}},
		"full metadata": {Metadata: fullMetadata(), Lock: &chartv2.Lock{Generated: at, Digest: "d",
			Dependencies: []*chartv2.Dependency{nil, {Name: "a", Tags: []string{}, ImportValues: []any{}}}}},
	}
}

func fullMetadata() *chartv2.Metadata {
	return &chartv2.Metadata{Name: "n", Home: "h", Sources: []string{"s"}, Version: "1", Description: "d", Keywords: []string{"k"},
		Maintainers: []*chartv2.Maintainer{{Name: "m", Email: "e", URL: "u"}, nil}, Icon: "i", APIVersion: "v2", Condition: "c", Tags: "t",
		AppVersion: "a", Deprecated: true, Annotations: map[string]string{"a": "b"}, KubeVersion: ">=1", Type: "library",
		Dependencies: []*chartv2.Dependency{{Name: "d", Version: "1", Repository: "r", Condition: "c", Tags: []string{"t"}, Enabled: true,
			ImportValues: []any{"x", map[string]any{"child": "c", "parent": []any{"p"}}}, Alias: "al"}}}
}

func encodeRaw(t testing.TB, c *chartv2.Chart) []byte {
	t.Helper()
	pieces, err := encodeChart(c)
	if err != nil {
		t.Fatal(err)
	}
	return codec.NewPieces(codec.KindChart, pieces).Raw()
}

func decodeRaw(t testing.TB, raw []byte) *chartv2.Chart {
	t.Helper()
	p, err := decodeChart(raw)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.Chart()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func differ(t testing.TB, what string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Fatalf("%s:\n got %.600s\nwant %.600s", what, gb, wb)
	}
}

// A Helm 4 chart, mod times and all, reads back as Helm 4's own JSON round
// trip of it; one without mod times is written as Helm 3's face writes it.
func TestChartRoundTripMatchesHelmJSON(t *testing.T) {
	t.Parallel()
	for name, c := range edgeCharts(t) {
		t.Run(name, func(t *testing.T) {
			raw := encodeRaw(t, c)
			differ(t, "round trip differs from Helm 4's JSON", decodeRaw(t, raw), jsonAs[chartv2.Chart](t, c))
			if again := encodeRaw(t, jsonAs[chartv2.Chart](t, c)); codec.Sum(again) != codec.Sum(raw) {
				t.Error("the digest changes over Helm 4's JSON round trip")
			}
		})
	}
}

// helm3Raw is the chart part Helm 3's face writes for c.
func helm3Raw(t testing.TB, c *chart3.Chart) []byte {
	t.Helper()
	s, err := helm3codec.Codec{}.Split(&release3.Release{Name: "r", Version: 1, Chart: c})
	if err != nil {
		t.Fatal(err)
	}
	return s.Chart.Raw()
}

// helm3Chart is the chart Helm 3's face reads from a chart part.
func helm3Chart(t testing.TB, raw []byte) *chart3.Chart {
	t.Helper()
	p, err := helm3codec.Codec{}.DecodeChart(raw)
	if err != nil {
		t.Fatal(err)
	}
	c, err := p.(*helm3codec.ChartPart).Chart()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// One store, both Helms: a chart written through either face reads back
// through the other as that Helm's drivers read the other's JSON, and one
// without mod times is one part whichever Helm wrote it.
func TestChartAcrossHelms(t *testing.T) {
	t.Parallel()
	for name, c := range edgeCharts(t) {
		t.Run(name, func(t *testing.T) {
			// Helm 4 writes, Helm 3 reads: the mod times are dropped.
			c3 := helm3Chart(t, encodeRaw(t, c))
			differ(t, "Helm 3 reads Helm 4's chart", c3, jsonAs[chart3.Chart](t, c))

			// Helm 3 writes (what it read back), Helm 4 reads.
			raw3 := helm3Raw(t, c3)
			differ(t, "Helm 4 reads Helm 3's chart", decodeRaw(t, raw3), jsonAs[chartv2.Chart](t, c3))
			if got := codec.Sum(encodeRaw(t, jsonAs[chartv2.Chart](t, c3))); got != codec.Sum(raw3) {
				t.Error("a chart without mod times has another digest written through Helm 4 than through Helm 3")
			}
		})
	}
}

// A version-3 part is written only for a chart that has a mod time Helm 4's
// JSON keeps.
func TestChartVersion(t *testing.T) {
	t.Parallel()
	for name, c := range edgeCharts(t) {
		want := byte(2)
		j := jsonAs[chartv2.Chart](t, c)
		if !j.ModTime.IsZero() || j.SchemaModTime != (time.Time{}) {
			want = 3
		}
		for _, fs := range [][]*common.File{j.Templates, j.Files} {
			for _, f := range fs {
				if f != nil && !f.ModTime.IsZero() {
					want = 3
				}
			}
		}
		if got := encodeRaw(t, c)[1]; got != want {
			t.Errorf("%s: version %d, want %d", name, got, want)
		}
	}
}

// TestChartMetadataCopied checks that cloneMetadata and cloneLock know every
// field of a reference type in Helm 4's chart metadata types, and that a
// chart built from a part shares nothing with the next but values and bytes.
func TestChartMetadataCopied(t *testing.T) {
	t.Parallel()
	copied := map[string]bool{
		"Metadata.Sources": true, "Metadata.Keywords": true, "Metadata.Maintainers": true, "Metadata.Annotations": true,
		"Metadata.Dependencies": true, "Dependency.Tags": true, "Dependency.ImportValues": true, "Lock.Dependencies": true,
	}
	for _, typ := range []reflect.Type{reflect.TypeOf(chartv2.Metadata{}), reflect.TypeOf(chartv2.Maintainer{}), reflect.TypeOf(chartv2.Dependency{}), reflect.TypeOf(chartv2.Lock{})} {
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
	p, err := decodeChart(encodeRaw(t, edgeCharts(t)["full metadata"]))
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Chart()
	want := jsonAs[chartv2.Chart](t, a)
	a.Metadata.Sources[0], a.Metadata.Keywords[0], a.Metadata.Maintainers[0].Name = "x", "x", "x"
	a.Metadata.Annotations["a"] = "x"
	a.Metadata.Dependencies[0].Tags[0] = "x"
	a.Metadata.Dependencies[0].ImportValues[1].(map[string]any)["child"] = "x"
	a.Metadata.Dependencies[0].ImportValues[1].(map[string]any)["parent"].([]any)[0] = "x"
	a.Lock.Dependencies[1].Name = "x"
	if b, _ := p.Chart(); !reflect.DeepEqual(b, want) {
		t.Fatal("changing the metadata of one chart built from a part changed the next")
	}

	p, err = decodeChart(encodeRaw(t, stamped(t)))
	if err != nil {
		t.Fatal(err)
	}
	a, _ = p.Chart()
	want = jsonAs[chartv2.Chart](t, a)
	a.Templates[0].Data[0], a.Templates[0].ModTime = '!', time.Now()
	a.Files[3].Data[10] = '!'
	a.ModTime = time.Now()
	a.Values["extraManifests"] = "changed"
	if b, _ := p.Chart(); !reflect.DeepEqual(b, want) {
		t.Fatal("changing one chart built from a part changed the next")
	}
}

// Charts built on one Share share its values and bytes, and no other part's
// Share builds one.
func TestChartOn(t *testing.T) {
	t.Parallel()
	p, err := decodeChart(encodeRaw(t, stamped(t)))
	if err != nil {
		t.Fatal(err)
	}
	sh := p.Share().(*Shared)
	a, err := p.ChartOn(sh)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := p.ChartOn(sh)
	if &a.Templates[0].Data[0] != &b.Templates[0].Data[0] || reflect.ValueOf(a.Values).Pointer() != reflect.ValueOf(b.Values).Pointer() {
		t.Error("charts built on one Share do not share its bytes and values")
	}
	if a.Templates[0] == b.Templates[0] || a.Metadata == b.Metadata {
		t.Error("charts built on one Share share their files or metadata")
	}
	other, _ := decodeChart(encodeRaw(t, stack(t)))
	if _, err := other.ChartOn(sh); err == nil {
		t.Error("ChartOn built a chart on another part's Share")
	}
	if _, err := p.ChartOn(nil); err == nil {
		t.Error("ChartOn built a chart on no Share")
	}
	adopted, _ := p.ChartOn(p.Adopt().(*Shared))
	differ(t, "a chart built on Adopt", adopted, a)
}
