package redis

import (
	"errors"
	"strings"

	goredis "github.com/redis/go-redis/v9"
)

// errUnavailable is wrapped by every error that comes from reaching Redis
// (connection refused or reset, timeouts, a server loading, a Cluster
// without a primary for a slot, redirects past go-redis's limit): such a
// failure is never "not found".
var errUnavailable = errors.New("redis is unavailable")

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
