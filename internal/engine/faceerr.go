package engine

import (
	"errors"

	"github.com/helmstore/helmstore/driver"
)

// Sentinels are a Helm version's own values for the outcomes Helm's drivers
// report.
type Sentinels struct {
	NotFound, Exists, InvalidKey error
}

// FaceError returns err with the face's sentinel for the outcome it reports:
// a bare sentinel (Query's "no release matches") as Helm's bare value, as
// Helm's drivers return it; a wrapped one so that errors.Is matches both
// Helm's value and package driver's, with the same text.
func FaceError(err error, s *Sentinels) error {
	if err == nil {
		return nil
	}
	pairs := [...]struct{ ours, helms error }{
		{driver.ErrReleaseNotFound, s.NotFound},
		{driver.ErrReleaseExists, s.Exists},
		{driver.ErrInvalidKey, s.InvalidKey},
	}
	for _, p := range pairs {
		if err == p.ours {
			return p.helms
		}
	}
	var re *driver.ReleaseError
	if !errors.As(err, &re) {
		return err
	}
	for _, p := range pairs {
		if errors.Is(re.Err, p.ours) {
			out := *re
			out.Err = &sentinelError{helm: p.helms, err: re.Err}
			return &out
		}
	}
	return err
}

// sentinelError is an error of package driver's that reports an outcome
// Helm has a sentinel for: its text is the error's own, and it matches both.
type sentinelError struct{ helm, err error }

func (e *sentinelError) Error() string   { return e.err.Error() }
func (e *sentinelError) Unwrap() []error { return []error{e.helm, e.err} }
