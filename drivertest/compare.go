package drivertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
)

// The suite compares releases by Helm's JSON encoding of them, which is what
// Helm's own drivers store and give back (and which leaves Labels out), and
// by their labels. Two releases encode alike exactly when
// releasecheck.Normalize makes them deep-equal (the encoding is
// deterministic, and what it decodes is encoded again to the same bytes), so
// comparing encodings is as strict as comparing normalized releases, at the
// cost of one encoding per release instead of an encoding, a decoding and a
// deep comparison of both. A release the suite compares many times is
// encoded once (see wanted), and the bytes of chart files, most of a large
// release, are compared as they are rather than encoded (see split).

// encode returns Helm's JSON encoding of r, nil for a nil release.
func encode(t testing.TB, r *release.Release) []byte {
	t.Helper()
	if r == nil {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("marshal release: %v", err)
	}
	return b
}

// split is a release's encoding in two parts: Helm's JSON encoding of it
// with the bytes of its chart's templates and files left out (each kept as
// null or "", as it is nil or not), and those bytes, in order. Two releases
// have equal splits exactly when they encode alike (base64, which encodes
// the bytes, is one-to-one), and comparing bytes costs far less than
// encoding them.
type split struct {
	json  []byte
	files [][]byte
}

// splitOf returns the split of r (zero for a nil release); with clone, its
// file bytes are copies, which nothing done to r later changes.
func splitOf(t testing.TB, r *release.Release, clone bool) split {
	t.Helper()
	if r == nil {
		return split{}
	}
	if r.Chart == nil {
		return split{json: encode(t, r)}
	}
	var files [][]byte
	strip := func(fs []*chart.File) []*chart.File {
		if fs == nil {
			return nil
		}
		out := make([]*chart.File, len(fs))
		for i, f := range fs {
			if f == nil {
				continue
			}
			c := &chart.File{Name: f.Name}
			if f.Data != nil {
				c.Data = []byte{}
				if clone {
					files = append(files, bytes.Clone(f.Data))
				} else {
					files = append(files, f.Data)
				}
			}
			out[i] = c
		}
		return out
	}
	rc, ch := *r, *r.Chart
	ch.Templates, ch.Files = strip(r.Chart.Templates), strip(r.Chart.Files)
	rc.Chart = &ch
	return split{json: encode(t, &rc), files: files}
}

func (a split) equal(b split) bool {
	if !bytes.Equal(a.json, b.json) || len(a.files) != len(b.files) {
		return false
	}
	for i := range a.files {
		if !bytes.Equal(a.files[i], b.files[i]) {
			return false
		}
	}
	return true
}

// wanted is a release the suite expects a store to give back, encoded once.
type wanted struct {
	enc    split
	labels map[string]string // custom labels only
}

// want encodes r for comparisons (a nil r wants a nil release).
func want(t testing.TB, r *release.Release) wanted {
	t.Helper()
	if r == nil {
		return wanted{}
	}
	return wanted{enc: splitOf(t, r, true), labels: customOnly(r.Labels)}
}

// sameRelease fails t unless got is what a driver should return for want:
// the same encoding, and exactly want's custom labels (Get and Delete
// return no system labels).
func sameRelease(t testing.TB, what string, got, w *release.Release) {
	t.Helper()
	sameAs(t, what, got, labelsOf(got), want(t, w))
}

// sameCustom is sameRelease for a release from List or Query, which also
// carries system labels: only its custom labels are compared.
func sameCustom(t testing.TB, what string, got, w *release.Release) {
	t.Helper()
	sameAs(t, what, got, customOnly(labelsOf(got)), want(t, w))
}

// sameAs fails t unless got, with labels, is w.
func sameAs(t testing.TB, what string, got *release.Release, labels map[string]string, w wanted) {
	t.Helper()
	if got == nil || w.enc.json == nil {
		if got != nil || w.enc.json != nil {
			t.Fatalf("%s: release differs\n got: %s\nwant: %s", what, brief(got), nilOr(w.enc.json))
		}
		return
	}
	g := splitOf(t, got, false)
	if !g.equal(w.enc) || !sameLabelSet(labels, w.labels) {
		t.Fatalf("%s: release differs\n%s", what, encodingDiff(g, labels, w.enc, w.labels))
	}
}

// labelsOf returns r's labels (nil for a nil release).
func labelsOf(r *release.Release) map[string]string {
	if r == nil {
		return nil
	}
	return r.Labels
}

// sameLabelSet reports whether a and b hold the same labels (nil is empty).
func sameLabelSet(a, b map[string]string) bool {
	return maps.Equal(a, b)
}

func nilOr(b []byte) string {
	if b == nil {
		return "<nil>"
	}
	return excerpt(b, 0)
}

// encodingDiff describes how two split releases differ: the first bytes
// of their encodings that differ, with some context, or the first chart
// file whose bytes differ, and both label sets.
func encodingDiff(got split, gotLabels map[string]string, want split, wantLabels map[string]string) string {
	labels := fmt.Sprintf("labels\n got: %v\nwant: %v", gotLabels, wantLabels)
	g, w := got.json, want.json
	i := 0
	for i < len(g) && i < len(w) && g[i] == w[i] {
		i++
	}
	if i < len(g) || i < len(w) {
		return fmt.Sprintf("encodings (chart file bytes left out: %d and %d bytes) first differ at byte %d\n got: %s\nwant: %s\n%s",
			len(g), len(w), i, excerpt(g, i), excerpt(w, i), labels)
	}
	for i := range min(len(got.files), len(want.files)) {
		if !bytes.Equal(got.files[i], want.files[i]) {
			return fmt.Sprintf("the bytes of chart file %d (of templates, then files) differ: %d bytes, want %d\n%s", i, len(got.files[i]), len(want.files[i]), labels)
		}
	}
	if len(got.files) != len(want.files) {
		return fmt.Sprintf("%d chart files with bytes, want %d\n%s", len(got.files), len(want.files), labels)
	}
	return labels
}

// excerpt is up to 300 bytes of b around offset i.
func excerpt(b []byte, i int) string {
	from, to := max(i-150, 0), min(i+150, len(b))
	s := string(b[from:to])
	if from > 0 {
		s = "..." + s
	}
	if to < len(b) {
		s += "..."
	}
	return s
}
