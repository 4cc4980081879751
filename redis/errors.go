package redis

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/helmstore/helmstore/driver"
)

// errUnavailable is wrapped by every error that comes from reaching Redis
// (connection refused or reset, timeouts, a server loading, a Cluster
// without a primary for a slot, redirects past go-redis's limit): such a
// failure is never "not found".
var errUnavailable = driver.ErrUnavailable

// unavailableError wraps a failure to reach or use the server.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return e.err.Error() }

// Unwrap returns the cause and errUnavailable.
func (e *unavailableError) Unwrap() []error { return []error{e.err, errUnavailable} }

// unavailable wraps err (from go-redis) so errors.Is(err, errUnavailable),
// unless it is a reply that says the request itself was refused: a missing
// permission (NOPERM) or a key of the wrong type (WRONGTYPE, someone else's
// key under our prefix).
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	var u *unavailableError
	if errors.As(err, &u) {
		return err
	}
	if refused(err) {
		return err
	}
	return &unavailableError{err: err}
}

// refused reports whether err is a Redis reply refusing the command for
// what it is (permissions, types), not for the state of the server.
func refused(err error) bool {
	var re goredis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	return strings.HasPrefix(msg, "NOPERM") || strings.HasPrefix(msg, "WRONGTYPE")
}

// isTransport reports whether err is not a Redis error reply at all: the
// connection failed, timed out or was closed.
func isTransport(err error) bool {
	var re goredis.Error
	return !errors.As(err, &re)
}

// transient reports whether err is a reply saying the command was not run
// for now (a slot being moved, a Cluster without a primary for a while, a
// server loading or just demoted) and can be sent again as it is. go-redis
// retries these itself, a few times; a write sends them again for longer,
// since a resharding or a failover takes seconds.
func transient(err error) bool {
	if _, ok := goredis.IsMovedError(err); ok {
		return true
	}
	if _, ok := goredis.IsAskError(err); ok {
		return true
	}
	return goredis.IsTryAgainError(err) || goredis.IsClusterDownError(err) || goredis.IsLoadingError(err) ||
		goredis.IsReadOnlyError(err) || goredis.IsMasterDownError(err)
}

// again runs fn until it returns nil or an error that is not transient
// (transientRetries times at most, while ctx lasts), and wraps a failure
// with unavailable.
func again(ctx context.Context, fn func() error) error {
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		if !transient(err) || attempt >= transientRetries {
			return unavailable(err)
		}
		select {
		case <-ctx.Done():
			return unavailable(errors.Join(err, ctx.Err()))
		case <-time.After(time.Duration(10+rand.IntN(40)) * time.Millisecond):
		}
	}
}

// isWrongType reports whether err is Redis's WRONGTYPE reply: the key holds
// another type than the command works on (a damaged or foreign key).
func isWrongType(err error) bool {
	var re goredis.Error
	return errors.As(err, &re) && strings.HasPrefix(re.Error(), "WRONGTYPE")
}

// firstError returns the first error among the commands of a pipeline
// that is neither a missing key (goredis.Nil) nor WRONGTYPE, which the
// caller handles command by command.
func firstError[C goredis.Cmder](cmds []C) error {
	for _, c := range cmds {
		if err := c.Err(); err != nil && !errors.Is(err, goredis.Nil) && !isWrongType(err) {
			return err
		}
	}
	return nil
}
