package codec

import (
	"bytes"
	"errors"
	"testing"
)

// A head written before formats were recorded starts with its JSON and is
// release v1; one of a later format is a FormatError that wraps both
// ErrUnknownFormat and ErrCorrupt; FinishHead records the format.
func TestHeadFormat(t *testing.T) {
	legacy := []byte(`{"name":"x"}`)
	if got, err := CheckFormat(legacy, ReleaseV1); err != nil || !bytes.Equal(got, legacy) {
		t.Fatalf("legacy head: %q, %v; want its JSON as release v1", got, err)
	}
	frame, err := FinishHead(ReleaseV1, legacy)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := Decompress(frame)
	if err != nil {
		t.Fatal(err)
	}
	if raw[0] != byte(ReleaseV1) {
		t.Fatalf("FinishHead wrote format byte %d, want %d", raw[0], ReleaseV1)
	}
	if got, err := CheckFormat(raw, ReleaseV1); err != nil || !bytes.Equal(got, legacy) {
		t.Fatalf("CheckFormat = %q, %v", got, err)
	}
	later := append([]byte{2}, legacy...)
	_, err = CheckFormat(later, ReleaseV1)
	var fe *FormatError
	if !errors.As(err, &fe) || fe.Got != 2 || !errors.Is(err, ErrUnknownFormat) || !errors.Is(err, ErrCorrupt) {
		t.Fatalf("CheckFormat of format 2 = %v; want a FormatError wrapping ErrUnknownFormat and ErrCorrupt", err)
	}
	if _, err := CheckFormat(nil, ReleaseV1); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("empty head: %v, want ErrCorrupt", err)
	}
}
