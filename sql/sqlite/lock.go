package sqlite

import (
	"context"
	sqldriver "database/sql/driver"
	"errors"
	"fmt"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// lockConnector makes modernc connections whose failures to take the write
// lock say so: SQLite's own "database is locked (5) (SQLITE_BUSY)", or a
// bare "context deadline exceeded" when the operation's deadline ended the
// wait, do not tell a user that another writer held the database, nor for
// how long this one waited.
type lockConnector struct{ sqldriver.Connector }

func (c lockConnector) Connect(ctx context.Context) (sqldriver.Conn, error) {
	conn, err := c.Connector.Connect(ctx)
	if err != nil {
		return nil, err
	}
	if full, ok := conn.(sqliteConn); ok {
		return lockConn{full}, nil
	}
	return conn, nil
}

// sqliteConn is what modernc's connections implement and database/sql uses.
type sqliteConn interface {
	sqldriver.Conn
	sqldriver.ConnBeginTx
	sqldriver.ConnPrepareContext
	sqldriver.ExecerContext
	sqldriver.QueryerContext
	sqldriver.Pinger
	sqldriver.SessionResetter
	sqldriver.Validator
}

// lockConn explains a BeginTx (BEGIN IMMEDIATE: the wait for the write
// lock) that failed waiting. The wait itself is bounded by busy_timeout and
// by ctx — the operation's deadline — whichever ends first.
type lockConn struct{ sqliteConn }

func (c lockConn) BeginTx(ctx context.Context, opts sqldriver.TxOptions) (sqldriver.Tx, error) {
	start := time.Now()
	tx, err := c.sqliteConn.BeginTx(ctx, opts)
	if err != nil {
		return nil, lockWaitError(ctx, err, time.Since(start))
	}
	return tx, nil
}

// LockedError reports that another connection — another process, or another
// store on the same file — held the database's write lock for as long as an
// operation could wait. Err is the cause: SQLite's SQLITE_BUSY, or the
// context's error when the operation's deadline ended the wait.
type LockedError struct {
	Waited time.Duration
	Err    error
}

// Error says that another writer holds the lock and how long the call waited.
func (e *LockedError) Error() string {
	return fmt.Sprintf("the sqlite database is locked by another writer: gave up waiting for the write lock after %s: %v", e.Waited.Round(time.Millisecond), e.Err)
}

// Unwrap returns the cause, so errors.Is(err, context.DeadlineExceeded) and
// the SQLite error code still work.
func (e *LockedError) Unwrap() error { return e.Err }

func lockWaitError(ctx context.Context, err error, waited time.Duration) error {
	c := sqliteCode(err) & 0xff
	if c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED || (ctx.Err() != nil && errors.Is(err, ctx.Err())) {
		return &LockedError{Waited: waited, Err: err}
	}
	return err
}
