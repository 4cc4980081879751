package redis

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/helmstore/helmstore/driver"

	goredis "github.com/redis/go-redis/v9"
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

// deniedError wraps a refusal of the store's credentials or permissions.
type deniedError struct{ err error }

func (e *deniedError) Error() string { return e.err.Error() }

// Unwrap returns the cause and driver.ErrAccessDenied.
func (e *deniedError) Unwrap() []error { return []error{e.err, driver.ErrAccessDenied} }

// unavailable wraps err (from go-redis) so errors.Is(err, errUnavailable),
// unless it is a reply that says the request itself was refused: the
// credentials or a permission (WRONGPASS, NOAUTH, NOPERM: wrapped so
// errors.Is(err, driver.ErrAccessDenied) instead) or a key of the wrong
// type (WRONGTYPE, someone else's key under our prefix).
func unavailable(err error) error {
	if err == nil {
		return nil
	}
	var u *unavailableError
	var d *deniedError
	if errors.As(err, &u) || errors.As(err, &d) {
		return err
	}
	if denied(err) {
		return &deniedError{err: err}
	}
	if isWrongType(err) {
		return err
	}
	return &unavailableError{err: err}
}

// denied reports whether err is a Redis reply refusing the store's
// credentials (WRONGPASS: a wrong password or user; NOAUTH: none given
// where one is required) or a permission (NOPERM: an ACL rule; in a
// script, Redis 7.0 says ERR and that the user executing it can't).
func denied(err error) bool {
	var re goredis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	for _, p := range []string{"WRONGPASS", "NOAUTH", "NOPERM"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return strings.Contains(msg, "The user executing the script can't")
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
// (for about failoverWindow at most, while ctx lasts), and wraps a failure
// with unavailable. In Cluster, a failure to reach a node counts as
// transient too, and makes the client reload the slot map before the next
// attempt: a primary that died is replaced by its replica within seconds,
// and go-redis on its own reloads the map once a minute, dialling the dead
// address meanwhile. Sending a command again is safe: reads are, and
// every write is an idempotent script (writeScript).
func (b *redisBackend) again(ctx context.Context, fn func() error) error {
	start := time.Now()
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil {
			return nil
		}
		retry := transient(err)
		if b.cluster && !retry && isTransport(err) && ctx.Err() == nil &&
			!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			retry = true
		}
		if !retry || attempt >= transientRetries || time.Since(start) > failoverWindow {
			return unavailable(err)
		}
		if cc, ok := b.c.(*goredis.ClusterClient); ok {
			cc.ReloadState(ctx) // in the background, at most one at a time
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
