package cas

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestRetryEndsWithConflictBeforeDeadline: a write that always loses is
// retried until the next wait would pass the context's deadline, and then
// reported as ErrConflict (not as the context's error: nothing was
// written, retrying is safe).
func TestRetryEndsWithConflictBeforeDeadline(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	attempts := 0
	err := Retry{First: time.Millisecond, Max: 20 * time.Millisecond}.do(ctx, systemClock{}, "always losing write", func(context.Context) (bool, error) {
		attempts++
		return false, nil
	})
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
	if attempts < 2 {
		t.Fatalf("%d attempts: the write was not retried", attempts)
	}
}

// TestRetryStopsOnSuccessAndError: done or an error ends the retries at
// once, with that outcome.
func TestRetryStopsOnSuccessAndError(t *testing.T) {
	t.Parallel()
	boom := errors.New("boom")
	n := 0
	err := Retry{}.do(context.Background(), systemClock{}, "w", func(context.Context) (bool, error) {
		n++
		if n == 3 {
			return true, nil
		}
		return false, nil
	})
	if err != nil || n != 3 {
		t.Fatalf("err = %v after %d attempts, want nil after 3", err, n)
	}
	if err := (Retry{}).do(context.Background(), systemClock{}, "w", func(context.Context) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the attempt's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (Retry{}).do(ctx, systemClock{}, "w", func(context.Context) (bool, error) { return false, nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v after the context ended, want its error", err)
	}
}

// TestRetryWithoutDeadline: a context without a deadline is bounded by
// NoDeadline.
func TestRetryWithoutDeadline(t *testing.T) {
	t.Parallel()
	err := Retry{First: time.Millisecond, Max: 5 * time.Millisecond, NoDeadline: 50 * time.Millisecond}.do(context.Background(), systemClock{}, "w",
		func(context.Context) (bool, error) { return false, nil })
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
}

// sleeps is a Clock whose Sleep returns at once, recording the wait.
type sleeps struct {
	systemClock
	waits []time.Duration
}

func (s *sleeps) Sleep(ctx context.Context, d time.Duration) error {
	s.waits = append(s.waits, d)
	return ctx.Err()
}

// TestRetryWaitsOnTheClock: the waits between attempts are the clock's
// Sleep, each drawn between half and all of a step that doubles from
// First up to Max.
func TestRetryWaitsOnTheClock(t *testing.T) {
	t.Parallel()
	clock := &sleeps{}
	r := Retry{First: 4 * time.Millisecond, Max: 40 * time.Millisecond}
	n := 0
	err := r.do(context.Background(), clock, "w", func(context.Context) (bool, error) {
		n++
		return n == 10, nil
	})
	if err != nil || n != 10 {
		t.Fatalf("err = %v after %d attempts, want nil after 10", err, n)
	}
	if len(clock.waits) != 9 {
		t.Fatalf("%d waits between 10 attempts, want 9", len(clock.waits))
	}
	step := r.First
	for i, d := range clock.waits {
		if d < step/2 || d > step {
			t.Errorf("wait %d = %v, want between %v and %v", i, d, step/2, step)
		}
		step = min(2*step, r.Max)
	}
}
