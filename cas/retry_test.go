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
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	attempts := 0
	err := Retry{First: time.Millisecond, Max: 20 * time.Millisecond}.Do(ctx, "always losing write", func(context.Context) (bool, error) {
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
	boom := errors.New("boom")
	n := 0
	err := Retry{}.Do(context.Background(), "w", func(context.Context) (bool, error) {
		n++
		if n == 3 {
			return true, nil
		}
		return false, nil
	})
	if err != nil || n != 3 {
		t.Fatalf("err = %v after %d attempts, want nil after 3", err, n)
	}
	if err := (Retry{}).Do(context.Background(), "w", func(context.Context) (bool, error) { return false, boom }); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the attempt's error", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := (Retry{}).Do(ctx, "w", func(context.Context) (bool, error) { return false, nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v after the context ended, want its error", err)
	}
}

// TestRetryWithoutDeadline: a context without a deadline is bounded by
// NoDeadline.
func TestRetryWithoutDeadline(t *testing.T) {
	err := Retry{First: time.Millisecond, Max: 5 * time.Millisecond, NoDeadline: 50 * time.Millisecond}.Do(context.Background(), "w",
		func(context.Context) (bool, error) { return false, nil })
	if !errors.Is(err, ErrConflict) {
		t.Fatalf("err = %v, want ErrConflict", err)
	}
}
