package sqlbackend

import (
	stdsql "database/sql"
	sqldriver "database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/helmstore/helmstore/driver"
)

// unavailableError is a failure to reach or use the database server: it
// wraps the cause and driver.ErrUnavailable, and reads as the cause.
type unavailableError struct{ err error }

func (e *unavailableError) Error() string { return e.err.Error() }

// Unwrap returns the cause and driver.ErrUnavailable.
func (e *unavailableError) Unwrap() []error { return []error{e.err, driver.ErrUnavailable} }

// deniedError is the server refusing the store's credentials or a
// privilege a statement needs: it wraps the cause and driver.ErrAccessDenied,
// and reads as the cause (the server's message names the user, never the
// password).
type deniedError struct{ err error }

func (e *deniedError) Error() string { return e.err.Error() }

// Unwrap returns the cause and driver.ErrAccessDenied.
func (e *deniedError) Unwrap() []error { return []error{e.err, driver.ErrAccessDenied} }

// classify wraps err with driver.ErrAccessDenied when the server refused
// the store's credentials or rights (Dialect.IsDenied), and with
// driver.ErrUnavailable when it is a failure of the server or of the
// connection to it (unavailable), so that a store whose server is down or
// refuses it never reports "not found"; any other error (nil included) is
// returned as it is.
func (b *backend) classify(err error) error {
	switch {
	case err == nil, errors.Is(err, driver.ErrUnavailable), errors.Is(err, driver.ErrAccessDenied):
		return err
	case b.d.IsDenied != nil && b.d.IsDenied(err):
		return &deniedError{err: err}
	case b.unavailable(err):
		return &unavailableError{err: err}
	}
	return err
}

// unavailable reports a failure of the server or of the connection to it:
// a network error (connection refused or reset, a dial or I/O timeout, DNS),
// a connection that went bad or was closed under a statement, or what the
// dialect recognises (Dialect.IsUnavailable: a server shutting down, a
// killed session, a statement timeout). Context cancellation by the
// caller, a constraint violation, a syntax error, a permission denied are
// not.
func (b *backend) unavailable(err error) bool {
	var op *net.OpError
	var dns *net.DNSError
	switch {
	case errors.As(err, &op), errors.As(err, &dns),
		errors.Is(err, sqldriver.ErrBadConn), errors.Is(err, stdsql.ErrConnDone),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return true
	}
	return b.d.IsUnavailable != nil && b.d.IsUnavailable(err)
}
