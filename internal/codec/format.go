package codec

import (
	"fmt"

	"github.com/helmstore/helmstore/driver"
)

// Format names the release format a head holds: which Helm type its JSON
// and parts decode to. It is the first byte of a head's JSON frame, so a
// later format can be stored beside today's without a migration and a
// reader that does not know a head's format says so instead of decoding it
// as another.
type Format byte

// The release formats. A head written before formats were recorded starts
// with its JSON ('{') and is ReleaseV1.
const (
	// ReleaseV1 is Helm's release v1 (helm.sh/helm/v3/pkg/release and
	// helm.sh/helm/v4/pkg/release/v1, which share one JSON form) with a
	// chart of API version v1 or v2.
	ReleaseV1 Format = 1
)

// String returns the format's name.
func (f Format) String() string {
	switch f {
	case ReleaseV1:
		return "release/v1"
	}
	return fmt.Sprintf("release format %d", byte(f))
}

// ErrUnknownFormat is driver.ErrUnknownFormat.
var ErrUnknownFormat = driver.ErrUnknownFormat

// FormatError reports a head of a format the reader does not read.
type FormatError struct {
	Got, Want Format
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("%v: %v (this reader reads %v)", ErrUnknownFormat, e.Got, e.Want)
}

// Unwrap returns ErrUnknownFormat and ErrCorrupt.
func (e *FormatError) Unwrap() []error { return []error{ErrUnknownFormat, ErrCorrupt} }

// HeadFormat splits a head's raw bytes (OpenHead) into its format and its
// JSON. A head that starts with its JSON is ReleaseV1.
func HeadFormat(raw []byte) (Format, []byte, error) {
	if len(raw) == 0 {
		return 0, nil, fmt.Errorf("%w: empty head", ErrCorrupt)
	}
	if raw[0] == '{' {
		return ReleaseV1, raw, nil
	}
	return Format(raw[0]), raw[1:], nil
}

// CheckFormat returns the JSON of a head's raw bytes (OpenHead) when it holds
// format want, and a *FormatError otherwise.
func CheckFormat(raw []byte, want Format) ([]byte, error) {
	got, body, err := HeadFormat(raw)
	if err != nil {
		return nil, err
	}
	if got != want {
		return nil, &FormatError{Got: got, Want: want}
	}
	return body, nil
}
