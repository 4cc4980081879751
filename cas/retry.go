package cas

import (
	"context"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"time"
)

// Retry is the protocol's one retry policy for writes that lose
// compare-and-swap races: waits (Config.Clock's Sleep) growing
// exponentially from First to Max,
// each drawn at random between half and all of the current step (so that
// writers that collided do not collide again in lockstep), until the next
// wait would pass the context's deadline, or NoDeadline after the first
// attempt for a context without one. Then the operation fails with
// ErrConflict.
type Retry struct {
	First, Max time.Duration
	// NoDeadline bounds the retries of an operation whose context has no
	// deadline.
	NoDeadline time.Duration
}

// Defaults of Retry.
const (
	DefaultRetryFirst      = 5 * time.Millisecond
	DefaultRetryMax        = time.Second
	DefaultRetryNoDeadline = 2 * time.Minute
)

func (r Retry) withDefaults() Retry {
	if r.First <= 0 {
		r.First = DefaultRetryFirst
	}
	if r.Max < r.First {
		r.Max = max(DefaultRetryMax, r.First)
	}
	if r.NoDeadline <= 0 {
		r.NoDeadline = DefaultRetryNoDeadline
	}
	return r
}

// do calls attempt until it reports done or an error, waiting between
// attempts (clock.Sleep) as the policy says. attempt reports done=false
// when it lost a race and should run again. When the policy gives up, do
// returns ErrConflict, wrapped with what (what the retried write was),
// also when ctx's deadline comes during a wait; when ctx is cancelled,
// ctx's error. The deadline is compared with the system's clock, which
// set it.
func (r Retry) do(ctx context.Context, clock Clock, what string, attempt func(ctx context.Context) (done bool, err error)) error {
	r = r.withDefaults()
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(r.NoDeadline)
	}
	var step time.Duration
	for n := 1; ; n++ {
		done, err := attempt(ctx)
		if err != nil || done {
			return err
		}
		switch {
		case step == 0:
			step = r.First
		case step < r.Max:
			step = min(2*step, r.Max)
		}
		d := step/2 + time.Duration(mrand.Int64N(int64(step/2)+1))
		if time.Now().Add(d).After(deadline) {
			return fmt.Errorf("%s: %w (%d attempts)", what, ErrConflict, n)
		}
		if err := clock.Sleep(ctx, d); err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				// The deadline came during a wait: the races were
				// lost as surely as if it had come at the next one.
				return fmt.Errorf("%s: %w (%d attempts): %w", what, ErrConflict, n, err)
			}
			return err
		}
	}
}
