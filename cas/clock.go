package cas

import (
	"context"
	"time"
)

// Clock is the time the protocol goes by (Config.Clock). Now dates the end
// of a Create's pending window (LabelPendingUntil) and ages the pending
// heads the protocol meets, against their windows and their Created time;
// Sleep spaces the attempts of a compare-and-swap loop (Retry). A Clock
// must be safe for concurrent use.
//
// The default is the system's clock. A backend whose store stamps objects
// by a clock of its own (Object.Created) may give one that follows the
// store's, so that a pending head is aged by the clock that dated it; it
// must stay within Config.ClockSkew of the clocks of every other process
// sharing the store and of the system clock, by which contexts' deadlines
// (and so the waits' bounds) are set.
type Clock interface {
	// Now returns the current time.
	Now() time.Time
	// Sleep waits for d, or until ctx ends: then it returns ctx's error.
	Sleep(ctx context.Context, d time.Duration) error
}

// systemClock is the default Clock: time.Now and a timer.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
