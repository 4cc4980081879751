// Package casprobe lets tests reach into a cas.Backend: stop its
// operations where a crash or a concurrent writer matters (Hooks), make
// every pending head abandoned at once, wait for its background commits,
// and reach the object store under it. None of this is part of cas's API:
// package cas fills in Of when it loads, and only tests call it (through
// internal/testing/castest's Probe, which types it).
package casprobe

import (
	"context"
	"errors"
	"time"

	"github.com/helmstore/helmstore/driver"
)

// Hooks are called at the points where a crash or a concurrent writer
// matters, so that tests can stop an operation there or interleave
// another. A hook returning an error stops the operation as that error
// would; one wrapping ErrCrash stops it without any cleanup, as a killed
// process would. Nil hooks are skipped.
type Hooks struct {
	// BeforePart: Create or Update, before storing part p.
	BeforePart func(p *driver.Part) error
	// BeforeCommit: Create, head and parts written, not yet committed.
	BeforeCommit func(h *driver.Head) error
	// BeforePut: Update, new parts stored, head not yet written.
	BeforePut func(h *driver.Head) error
	// CleanupDecided: a cleanup has read the part of kind k and digest d
	// and decided what to do; its write (delete, or referrer removal)
	// comes next.
	CleanupDecided func(k driver.Kind, d driver.Digest)
}

// ErrCrash, wrapped by a hook's error, stops the operation with no
// cleanup, as if the process had died there.
var ErrCrash = errors.New("simulated crash")

// Probe is what a test reaches of one cas.Backend.
type Probe struct {
	// Hooks are the backend's: a test sets a field before the operation
	// it stops, and clears it after.
	Hooks Hooks
	// Store is the cas.ObjectStore the backend runs on.
	Store any
	// WaitCommits returns once no background work of the backend (a
	// commit, a rollback) is running.
	WaitCommits func()
	// SetPendingTimeout changes the backend's Config.PendingTimeout (0:
	// every pending head it meets is abandoned at once).
	SetPendingTimeout func(d time.Duration)
	// ReadChunks reads and joins the named chunk objects of namespace
	// ns, as the protocol reads a chunked frame, consistently: nil if
	// one is missing, an error wrapping driver.ErrCorrupt if one is
	// damaged or out of place.
	ReadChunks func(ctx context.Context, ns string, names []string) ([]byte, error)
}

// Of returns the probe of b, a *cas.Backend (it panics on anything else).
// Package cas sets it when it loads.
var Of func(b any) *Probe
