package drivertest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"testing"

	"helm.sh/helm/v3/pkg/release"
)

// The suite compares releases by Helm's JSON encoding of them, which is what
// Helm's own drivers store and give back (and which leaves Labels out), and
// by their labels. Two releases encode alike exactly when Normalize makes
// them deep-equal (the encoding is deterministic, and what Normalize decodes
// is encoded again to the same bytes), so comparing encodings is as strict
// as comparing normalized releases, at the cost of one encoding per release
// instead of an encoding, a decoding and a deep comparison of both. A
// release the suite compares many times is encoded once (see wanted).

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

// wanted is a release the suite expects a store to give back, encoded once.
type wanted struct {
	json   []byte
	labels map[string]string // custom labels only
}

// want encodes r for comparisons (a nil r wants a nil release).
func want(t testing.TB, r *release.Release) wanted {
	t.Helper()
	if r == nil {
		return wanted{}
	}
	return wanted{json: encode(t, r), labels: customOnly(r.Labels)}
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
	if got == nil || w.json == nil {
		if got != nil || w.json != nil {
			t.Fatalf("%s: release differs\n got: %s\nwant: %s", what, brief(got), nilOr(w.json))
		}
		return
	}
	g := encode(t, got)
	if !bytes.Equal(g, w.json) || !sameLabelSet(labels, w.labels) {
		t.Fatalf("%s: release differs\n%s", what, encodingDiff(g, labels, w.json, w.labels))
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

// encodingDiff describes how two encoded releases differ: the first bytes
// that differ, with some context, and both label sets.
func encodingDiff(got []byte, gotLabels map[string]string, want []byte, wantLabels map[string]string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	if i == len(got) && i == len(want) {
		return fmt.Sprintf("labels\n got: %v\nwant: %v", gotLabels, wantLabels)
	}
	return fmt.Sprintf("encodings (%d and %d bytes) first differ at byte %d\n got: %s\nwant: %s\n labels got: %v\nlabels want: %v",
		len(got), len(want), i, excerpt(got, i), excerpt(want, i), gotLabels, wantLabels)
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
