package cas

import (
	"errors"

	"github.com/helmstore/helmstore/driver"
)

// Hooks are called at the points where a crash or a concurrent writer
// matters, so that tests can stop an operation there or interleave another.
// A hook returning an error stops the operation as that error would; one
// wrapping ErrCrash stops it without any cleanup, as a killed process would.
// Nil hooks are skipped.
type Hooks struct {
	// BeforePart: Create or Update, before storing part p.
	BeforePart func(p *driver.Part) error
	// BeforeCommit: Create, head and parts written, not yet committed.
	BeforeCommit func(h *driver.Head) error
	// BeforePut: Update, new parts stored, head not yet written.
	BeforePut func(h *driver.Head) error
	// CleanupDecided: a cleanup has read part ref and decided what to do;
	// its write (delete, or referrer removal) comes next.
	CleanupDecided func(ref Ref)
}

// ErrCrash, wrapped by a hook's error, stops the operation with no
// cleanup, as if the process had died there.
var ErrCrash = errors.New("simulated crash")
