package driver

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sealed returns a head of release name v1 in ns referencing parts, its
// body sealed over key and digests as the engine seals it.
func sealed(ns, name string, parts ...*Part) *Head {
	h := &Head{Namespace: ns, Key: MakeKey(name, 1), Name: name, Version: 1, Status: "deployed", Owner: Owner}
	for _, p := range parts {
		switch {
		case p.Kind == KindChart:
			h.Chart = p.Digest
		case p.IsDelta() && p.Kind == KindValues:
			h.Values, h.ValuesBase = p.Digest, p.Base
		case p.IsDelta():
			h.Manifest, h.ManifestBase = p.Digest, p.Base
		case p.Kind == KindValues && h.Values.IsZero():
			h.Values = p.Digest
		case p.Kind == KindManifest && h.Manifest.IsZero():
			h.Manifest = p.Digest
		}
	}
	h.Seal([]byte(`{"name":"` + name + `"}`))
	return h
}

func part(k Kind, s string) *Part {
	raw := append([]byte{byte(k)}, s...)
	return NewPart(k, Sum(raw), len(raw), func() []byte { return raw })
}

// delta returns a values or manifest part stored as a delta against base.
func delta(t *testing.T, base *Part, s string) *Part {
	t.Helper()
	t.Helper()
	p := part(base.Kind, strings.Repeat(s, 100))
	d := NewPart(p.Kind, Sum(append(base.Digest[:], p.Digest[:]...)), p.Size, p.Frame)
	d.Base, d.Content = base.Digest, p.Digest
	return d
}

func TestQueryMatches(t *testing.T) {
	t.Parallel()
	v2, v3, at := 2, 3, int64(100)
	h := &Head{Namespace: "ns", Key: MakeKey("app", 2), Name: "app", Version: 2, Status: "deployed", CreatedAt: 100,
		Labels: map[string]string{"team": "a", "tier": "web"}}
	for _, c := range []struct {
		q    Query
		want bool
	}{
		{Query{}, true},
		{Query{Namespace: "ns", Name: "app", Version: &v2, Status: "deployed", CreatedAt: &at}, true},
		{Query{Key: MakeKey("app", 2), Labels: map[string]string{"team": "a"}}, true},
		{Query{Labels: map[string]string{"team": "a", "tier": "web"}}, true},
		{Query{Namespace: "other"}, false},
		{Query{Key: MakeKey("app", 3)}, false},
		{Query{Name: "ap"}, false},
		{Query{Version: &v3}, false},
		{Query{Status: "superseded"}, false},
		{Query{ModifiedAt: &at}, false}, // not modified yet: ModifiedAt 0
		{Query{Labels: map[string]string{"team": "b"}}, false},
		{Query{Labels: map[string]string{"team": "a", "zone": "x"}}, false},
		{Query{Labels: map[string]string{"team": ""}}, false},
	} {
		if got := c.q.Matches(h); got != c.want {
			t.Errorf("%+v matches %v, want %v", c.q, got, c.want)
		}
	}
}

func TestSortHeads(t *testing.T) {
	t.Parallel()
	hs := []*Head{
		{Namespace: "b", Name: "a", Version: 1},
		{Namespace: "a", Name: "z", Version: 10},
		{Namespace: "a", Name: "z", Version: 9},
		{Namespace: "a", Name: "y", Version: 100},
	}
	SortHeads(hs)
	var got []string
	for _, h := range hs {
		got = append(got, h.Namespace+"/"+MakeKey(h.Name, h.Version))
	}
	want := []string{"a/" + MakeKey("y", 100), "a/" + MakeKey("z", 9), "a/" + MakeKey("z", 10), "b/" + MakeKey("a", 1)}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("sorted %q, want %q (versions numerically)", got, want)
	}
}

func digests[T any](xs []T, d func(T) Digest) []Digest {
	var out []Digest
	for _, x := range xs {
		out = append(out, d(x))
	}
	return out
}

func sortDigests(ds []Digest) {
	slices.SortFunc(ds, func(a, b Digest) int { return bytes.Compare(a[:], b[:]) })
}

func TestDiffParts(t *testing.T) {
	t.Parallel()
	chart, v1, m1 := part(KindChart, "c"), part(KindValues, strings.Repeat("v", 300)), part(KindManifest, "m1")
	v2 := delta(t, v1, "w")
	m2 := part(KindManifest, "m2")
	old := sealed("ns", "app", chart, v1, m1)
	h := sealed("ns", "app", chart, v2, m2)
	// Given: every part h references, the delta's base among them, in any
	// order, with a duplicate.
	add, drop, err := DiffParts(old, h, []*Part{m2, v2, chart, v1, m2})
	if err != nil {
		t.Fatal(err)
	}
	pd := func(p *Part) Digest { return p.Digest }
	rd := func(r PartRef) Digest { return r.Digest }
	wantAdd := []*Part{v2, m2}
	want := digests(wantAdd, pd)
	sortDigests(want)
	if got := digests(add, pd); !reflect.DeepEqual(got, want) {
		t.Fatalf("added %v, want the new delta and manifest %v (v1 stays: it is the delta's base)", got, want)
	}
	if got := digests(drop, rd); !reflect.DeepEqual(got, []Digest{m1.Digest}) || drop[0].Kind != KindManifest || drop[0].Namespace != "ns" {
		t.Fatalf("dropped %+v, want only the old manifest", drop)
	}

	// Back to full values: the delta and (no longer a base) nothing else.
	add, drop, err = DiffParts(h, old, []*Part{chart, v1, m1})
	if err != nil {
		t.Fatal(err)
	}
	if got := digests(add, pd); !reflect.DeepEqual(got, []Digest{m1.Digest}) {
		t.Fatalf("added %v, want the manifest", got)
	}
	want = []Digest{v2.Digest, m2.Digest}
	sortDigests(want)
	if got := digests(drop, rd); !reflect.DeepEqual(got, want) {
		t.Fatalf("dropped %v, want the delta and the manifest %v", got, want)
	}

	// Create: everything is added; a part not given is an error naming it.
	if add, drop, err = DiffParts(nil, h, []*Part{chart, v2, v1, m2}); err != nil || len(add) != 4 || drop != nil {
		t.Fatalf("create: %d added, %d dropped, %v", len(add), len(drop), err)
	}
	_, _, err = DiffParts(nil, h, []*Part{chart, v2, m2})
	if err == nil || !strings.Contains(err.Error(), "values "+v1.Digest.Short()) || !strings.Contains(err.Error(), h.Key) {
		t.Fatalf("create without the delta's base: %v", err)
	}
	// An old head whose digests are not the ones sealed names parts that
	// may be another release's: none is dropped, every part of h is added.
	forged := sealed("ns", "app", chart, v1, m1)
	forged.Manifest = m2.Digest
	if add, drop, err = DiffParts(forged, h, []*Part{chart, v2, v1, m2}); err != nil || len(add) != 4 || drop != nil {
		t.Fatalf("update of an unverified head: %d added, %v dropped, %v", len(add), drop, err)
	}
	// A head read back with its digests but not its body counts for
	// nothing, unless the backend vouches for it by sealing it: then its
	// references are dropped as any verified head's.
	recorded := *old
	recorded.Body = nil
	if _, drop, err = DiffParts(&recorded, h, []*Part{chart, v2, v1, m2}); err != nil || drop != nil {
		t.Fatalf("bodiless head: dropped %v, %v; want nothing dropped", drop, err)
	}
	recorded.Seal(nil)
	if _, drop, err = DiffParts(&recorded, h, []*Part{chart, v2, v1, m2}); err != nil || !reflect.DeepEqual(digests(drop, rd), []Digest{m1.Digest}) {
		t.Fatalf("vouched-for head: dropped %v, %v; want the old manifest", drop, err)
	}
	// Unchanged: nothing to do, nothing needed.
	if add, drop, err = DiffParts(h, h, nil); err != nil || add != nil || drop != nil {
		t.Fatalf("same head: %v, %v, %v", add, drop, err)
	}
}

func TestSameLabels(t *testing.T) {
	t.Parallel()
	if !SameLabels(nil, map[string]string{}) || SameLabels(map[string]string{"a": ""}, map[string]string{"b": ""}) ||
		SameLabels(map[string]string{"a": "1"}, map[string]string{"a": "2"}) {
		t.Fatal("SameLabels is wrong")
	}
}

func TestSystemLabels(t *testing.T) {
	t.Parallel()
	h := &Head{Name: "app", Version: 3, Status: "deployed", Owner: Owner, CreatedAt: 10}
	want := map[string]string{"name": "app", "owner": "helm", "status": "deployed", "version": "3", "createdAt": "10"}
	if got := h.AllLabels(); !reflect.DeepEqual(got, want) {
		t.Fatalf("system labels %v, want %v (no modifiedAt before an update)", got, want)
	}
	h.ModifiedAt, h.Labels = 20, map[string]string{"team": "a"}
	want["modifiedAt"], want["team"] = "20", "a"
	if got := h.AllLabels(); !reflect.DeepEqual(got, want) {
		t.Fatalf("all labels %v, want %v", got, want)
	}
	if _, ok := h.Labels["name"]; ok {
		t.Fatal("AllLabels changed the head's custom labels")
	}
	for _, k := range systemLabels {
		if !IsSystemLabel(k) {
			t.Errorf("%q is not a system label", k)
		}
		if _, ok := want[k]; !ok {
			t.Errorf("system label %q is not set by AllLabels", k)
		}
	}
	if IsSystemLabel("team") || len(systemLabels) != 6 {
		t.Fatal("system labels are name, owner, status, version, createdAt, modifiedAt")
	}
}

func TestKeepCreatedAt(t *testing.T) {
	t.Parallel()
	old := &Head{CreatedAt: 5}
	h := &Head{ModifiedAt: 9}
	h.KeepCreatedAt(old)
	if h.CreatedAt != 5 || h.ModifiedAt != 9 {
		t.Fatalf("%+v", h)
	}
}

func TestDigestText(t *testing.T) {
	t.Parallel()
	h := sealed("ns", "app", part(KindChart, "c"), part(KindManifest, "m"))
	txt := h.DigestText()
	if txt.Chart != h.Chart.String() || len(txt.Chart) != 64 || txt.Values != "" || txt.Manifest != h.Manifest.String() {
		t.Fatalf("%+v", txt)
	}
	var back Head
	if err := back.SetDigestText(txt); err != nil || back.Chart != h.Chart || back.Manifest != h.Manifest || !back.Values.IsZero() {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
	// A backend's own struct with the same fields converts.
	type stored struct{ Chart, Values, Manifest, ValuesBase, ManifestBase string }
	if s := stored(txt); DigestText(s) != txt {
		t.Fatal("conversion changed the digests")
	}
	bad := Head{Namespace: "ns", Key: "k"}
	txt.Values, txt.ManifestBase = "zz", strings.Repeat("a", 63)
	err := bad.SetDigestText(txt)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "values digest") || !strings.Contains(err.Error(), "manifest base digest") ||
		!strings.Contains(err.Error(), `"k"`) || bad.Chart != h.Chart || !bad.Values.IsZero() {
		t.Fatalf("bad digests: %v, %+v", err, bad)
	}
}

func TestChunks(t *testing.T) {
	t.Parallel()
	frame := []byte("0123456789")
	for _, max := range []int{0, 1, 3, 5, 10, 11} {
		cs := Chunks(frame, max)
		got, err := JoinChunks(cs, len(cs), int64(len(frame)))
		if err != nil || string(got) != string(frame) {
			t.Fatalf("max %d: %q, %v", max, got, err)
		}
		if max > 0 && len(cs) != (len(frame)+max-1)/max {
			t.Fatalf("max %d: %d chunks", max, len(cs))
		}
	}
	cs := Chunks(frame, 4) // 4 + 4 + 2
	for name, c := range map[string]struct {
		chunks [][]byte
		count  int
		size   int64
	}{
		"one missing at the end": {cs[:2], 3, 10},
		"one too many":           {append(cs[:3:3], []byte("x")), 3, 10},
		"a hole":                 {[][]byte{cs[0], nil, cs[2]}, 3, 10},
		"a short chunk":          {[][]byte{cs[0], cs[1][:3], cs[2]}, 3, 10},
		"a long chunk":           {[][]byte{cs[0], cs[1], append([]byte("ab"), 'c')}, 3, 10},
	} {
		if _, err := JoinChunks(c.chunks, c.count, c.size); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
	if got, err := JoinChunks(cs, 3, -1); err != nil || string(got) != string(frame) {
		t.Fatalf("unchecked size: %q, %v", got, err)
	}
	if got, err := JoinChunks(nil, 0, 0); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty frame: %q, %v", got, err)
	}
}

func TestPlanDelete(t *testing.T) {
	t.Parallel()
	chart, v1 := part(KindChart, "c"), part(KindValues, strings.Repeat("v", 300))
	v2 := delta(t, v1, "w")
	h := sealed("ns", "app", chart, v2)
	cached := map[Digest]bool{chart.Digest: true}
	have := func(d Digest) bool { return cached[d] }
	read, drop := PlanDelete(h, have)
	rd := func(r PartRef) Digest { return r.Digest }
	if got := digests(read, rd); !reflect.DeepEqual(got, []Digest{v2.Digest, v1.Digest}) || read[0].Base != v1.Digest {
		t.Fatalf("read %+v, want the delta (with its base named) and its base, not the cached chart", read)
	}
	if got := digests(drop, rd); !reflect.DeepEqual(got, []Digest{chart.Digest, v2.Digest, v1.Digest}) {
		t.Fatalf("drop %v, want every part", got)
	}
	// Damaged labels, seal intact: its parts are its own: dropped, not read.
	h.Err = errors.New("labels garbled")
	if read, drop := PlanDelete(h, have); read != nil || len(drop) != 3 {
		t.Fatalf("head with Err: read %v, drop %v", read, drop)
	}
	// A head whose digests are not the ones sealed (edited, copied from
	// another release): nothing is read or dropped.
	h.Err = nil
	h.Chart = part(KindChart, "other").Digest
	if read, drop := PlanDelete(h, have); read != nil || drop != nil {
		t.Fatalf("unverified head: read %v, drop %v", read, drop)
	}
}
