package castest

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/helmstore/helmstore/cas"
)

// Clock is a cas.Clock for tests (cas.Config.Clock): its time is the
// system's plus an offset that Advance moves forward, as a process whose
// clock runs ahead (or that waited that long) sees it; its Sleep returns
// at once, yielding the processor, so that the waits between
// compare-and-swap retries cost no wall time. Retries still end at their
// context's deadline (by the system clock). The zero Clock is ready to
// use.
type Clock struct{ offset atomic.Int64 }

var _ cas.Clock = (*Clock)(nil)

// Now returns the system's time plus the offset.
func (c *Clock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// Sleep yields the processor and returns ctx's error, without waiting d.
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	runtime.Gosched()
	return ctx.Err()
}

// Advance moves the clock d forward.
func (c *Clock) Advance(d time.Duration) { c.offset.Add(int64(d)) }
