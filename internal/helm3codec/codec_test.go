package helm3codec

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// helmJSON is what Helm's own drivers return for v (a release or a chart):
// its JSON round trip.
func helmJSON[T any](t testing.TB, v *T) *T {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out T
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// helmRoundTrip is what Helm's own drivers return for rls.
func helmRoundTrip(t testing.TB, rls *release.Release) *release.Release { return helmJSON(t, rls) }

func roundTrip(t testing.TB, rls *release.Release, labels map[string]string) *release.Release {
	t.Helper()
	s, err := SplitRelease(rls)
	if err != nil {
		t.Fatal(err)
	}
	dec := func(p *Part) *Decoded {
		if p == nil {
			return nil
		}
		raw, err := Open(p.Frame(), p.Digest)
		if err != nil {
			t.Fatal(err)
		}
		d, err := DecodePart(p.Kind, raw)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	h := &driver.Head{Key: "sh.helm.release.v1.x.v1", Chart: s.Digest(KindChart), Values: s.Digest(KindValues), Manifest: s.Digest(KindManifest)}
	h.Seal(s.Body)
	raw, err := OpenHead(h)
	if err != nil {
		t.Fatal(err)
	}
	head, err := codec.CheckFormat(raw, codec.ReleaseV1)
	if err != nil {
		t.Fatal(err)
	}
	out, err := Assemble(head, dec(s.Chart), dec(s.Values), dec(s.Manifest), labels)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func edgeReleases() map[string]*release.Release {
	now := helmtime.Unix(1700000000, 123456789)
	base := func() *release.Release {
		return &release.Release{Name: "edge", Namespace: "ns", Version: 3, Info: &release.Info{Status: release.StatusDeployed, LastDeployed: now}}
	}
	out := map[string]*release.Release{}
	out["bare"] = base()
	r := base()
	r.Chart = &chart.Chart{}
	out["empty chart"] = r
	r = base()
	r.Chart = &chart.Chart{Metadata: &chart.Metadata{Name: "c"}, Templates: []*chart.File{}, Files: []*chart.File{nil, {Name: "nil-data"}, {Name: "empty", Data: []byte{}}, {Name: "x", Data: []byte{0, 1, 2, 255}}},
		Values: map[string]interface{}{}, Schema: []byte{}, Raw: []*chart.File{{Name: "raw"}}}
	r.Chart.AddDependency(&chart.Chart{Metadata: &chart.Metadata{Name: "sub"}})
	out["nil vs empty"] = r
	r = base()
	r.Config = map[string]interface{}{}
	r.Manifest = "bad \xff\xfe utf8 \xc3"
	out["empty config, invalid utf8 manifest"] = r
	r = base()
	r.Config = map[string]interface{}{"a": map[string]interface{}{}, "b": []interface{}{}, "c": nil, "d": 1, "e": int64(1 << 60), "f": 1.5, "g": "<&>", "h": []string{"x"}}
	r.Chart = &chart.Chart{Values: map[string]interface{}{"nested": map[string]interface{}{"list": []interface{}{1, "two", nil, true}}}, Templates: []*chart.File{{Name: "t\xffbad-name", Data: []byte("x")}}}
	r.Info.Resources = nil
	r.Hooks = []*release.Hook{}
	out["values types"] = r
	r = base()
	r.Info = &release.Info{}
	r.Namespace = ""
	out["empty info"] = r
	out["large"] = fixture.LargeRelease("big", "ns", 2)
	return out
}

func TestRoundTripMatchesHelmJSON(t *testing.T) {
	t.Parallel()
	for name, rls := range edgeReleases() {
		t.Run(name, func(t *testing.T) {
			labels := map[string]string{"team": "a"}
			want := helmRoundTrip(t, rls)
			want.Labels = labels
			got := roundTrip(t, rls, labels)
			if !reflect.DeepEqual(got, want) {
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(want)
				t.Fatalf("round trip differs from Helm's:\n got %.600s\nwant %.600s", gb, wb)
			}
		})
	}
}

func TestSplitDoesNotModifyRelease(t *testing.T) {
	t.Parallel()
	rls := fixture.LargeRelease("big", "ns", 1)
	before := helmRoundTrip(t, rls)
	if _, err := SplitRelease(rls); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(helmRoundTrip(t, rls), before) || rls.Chart == nil || rls.Manifest == "" {
		t.Fatal("SplitRelease modified its argument")
	}
}

func TestDigestsAreStableAndContentAddressed(t *testing.T) {
	t.Parallel()
	a, _ := SplitRelease(fixture.LargeRelease("a", "ns", 1))
	b, _ := SplitRelease(fixture.LargeRelease("b", "other", 7))
	if a.Chart.Digest != b.Chart.Digest {
		t.Fatal("same chart, different digests")
	}
	if a.Values.Digest == b.Values.Digest {
		t.Fatal("different values, same digest")
	}
	if Sum(a.Chart.Raw()) != a.Chart.Digest {
		t.Fatal("digest is not the SHA-256 of the canonical bytes")
	}
}

func TestAssembledReleasesShareNoMemory(t *testing.T) {
	t.Parallel()
	rls := fixture.LargeRelease("big", "ns", 1)
	s, _ := SplitRelease(rls)
	raw, _ := Open(s.Chart.Frame(), s.Chart.Digest)
	d, err := DecodePart(KindChart, raw)
	if err != nil {
		t.Fatal(err)
	}
	c1, _ := chartOf(d)
	c1.Templates[1].Data[0] = '!'
	c1.Values["enabled"] = "mutated"
	c2, _ := chartOf(d)
	if c2.Templates[1].Data[0] == '!' || c2.Values["enabled"] != true {
		t.Fatal("a mutation of one decoded chart leaked into the next")
	}
}

func TestCorruptionIsDetected(t *testing.T) {
	t.Parallel()
	s, _ := SplitRelease(fixture.LargeRelease("big", "ns", 1))
	frame := append([]byte(nil), s.Chart.Frame()...)
	frame[len(frame)/2] ^= 0x40
	if _, err := Open(frame, s.Chart.Digest); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("flipped bit: got %v, want ErrCorrupt", err)
	}
	if _, err := Open(s.Values.Frame(), s.Chart.Digest); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("wrong part: got %v, want ErrCorrupt", err)
	}
	if _, err := Open([]byte{9, 1, 2}, s.Chart.Digest); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("unknown frame: got %v", err)
	}
	if _, err := DecodePart(KindValues, s.Chart.Raw()); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("chart decoded as values: got %v", err)
	}
	// Truncated chart parts never panic.
	for _, n := range []int{0, 1, 2, 3, 10, len(s.Chart.Raw()) / 2, len(s.Chart.Raw()) - 1} {
		if _, err := DecodePart(KindChart, s.Chart.Raw()[:n]); err == nil {
			t.Fatalf("truncated to %d bytes: no error", n)
		}
	}
}

func FuzzChartPart(f *testing.F) {
	s, _ := SplitRelease(edgeReleases()["nil vs empty"])
	f.Add(s.Chart.Raw())
	f.Fuzz(func(t *testing.T, raw []byte) {
		d, err := DecodePart(KindChart, raw)
		if err != nil {
			return
		}
		c, err := chartOf(d)
		if err != nil {
			return
		}
		// Whatever decodes must re-encode to something that decodes equal.
		pieces, err := encodeChart(c)
		if err != nil {
			t.Fatal(err)
		}
		raw2 := newPart(KindChart, pieces).Raw()
		d2, err := DecodePart(KindChart, raw2)
		if err != nil {
			t.Fatal(err)
		}
		c2, _ := chartOf(d2)
		if !reflect.DeepEqual(c, c2) {
			t.Fatal("re-encoded chart differs")
		}
	})
}
