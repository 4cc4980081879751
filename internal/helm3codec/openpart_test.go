package helm3codec

import (
	"errors"
	"reflect"
	"testing"

	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// OpenPart gives what Open and DecodePart give, for parts below and above
// the size from which it hashes alongside decoding, and a wrong digest is
// ErrCorrupt even when the bytes decode.
func TestOpenPart(t *testing.T) {
	t.Parallel()
	rls := fixture.NewStack(1).Release("stack", "ns", 1)
	s, err := SplitRelease(rls)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Chart.Raw()) < hashAlongsideMin || len(s.Values.Raw()) >= hashAlongsideMin {
		t.Fatalf("fixture no longer spans hashAlongsideMin: chart %d, values %d bytes", len(s.Chart.Raw()), len(s.Values.Raw()))
	}
	for _, p := range s.Parts() {
		raw, err := Open(p.Frame(), p.Digest)
		if err != nil {
			t.Fatal(err)
		}
		want, err := DecodePart(p.Kind, raw)
		if err != nil {
			t.Fatal(err)
		}
		got, err := OpenPart(p.Kind, p.Frame(), p.Digest)
		if err != nil {
			t.Fatalf("%s: %v", p.Kind, err)
		}
		if p.Kind == KindChart {
			wc, _ := chartOf(want)
			gc, _ := chartOf(got)
			if !reflect.DeepEqual(wc, gc) {
				t.Errorf("%s: OpenPart's chart differs from Open+DecodePart's", p.Kind)
			}
		} else if !reflect.DeepEqual(want, got) {
			t.Errorf("%s: OpenPart = %+v, want %+v", p.Kind, got, want)
		}

		// The same bytes under another digest: they decode, but must not
		// be returned.
		other := Sum([]byte("another part"))
		if d, err := OpenPart(p.Kind, p.Frame(), other); !errors.Is(err, ErrCorrupt) || d != nil {
			t.Errorf("%s under a wrong digest: got %v, %v; want nil, ErrCorrupt", p.Kind, d, err)
		}
		// Garbage whose digest matches: the decoder's error.
		junk := []byte{byte(p.Kind), 0xff, 0xff, 0xff}
		junk = append(junk, make([]byte, len(p.Raw()))...)
		if _, err := OpenPart(p.Kind, Compress(junk), Sum(junk)); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: undecodable bytes with a matching digest: err = %v, want ErrCorrupt", p.Kind, err)
		}
	}
}
