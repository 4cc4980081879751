package sqlbackend

import (
	"context"
	stdsql "database/sql"

	"github.com/helmstore/helmstore/driver"
)

// What this package's external tests (which open stores through the
// dialect packages, so cannot be internal) use of its internals.

// Backend is the backend Open returns, for the tests to assert a store's
// backend to (engine.Of(s).Backend().(*sqlbackend.Backend)).
type Backend = backend

// Deadlocks returns how many deadlocks the database reported to b's write
// transactions, retried or not.
func (b *backend) Deadlocks() int64 { return b.deadlocks.Load() }

// Queries returns how many queries b has run.
func (b *backend) Queries() int64 { return b.queries.Load() }

// SetBeforeCommit makes fn run inside every write transaction of b just
// before it commits (attempt counts the runs of one transaction from 0).
func (b *backend) SetBeforeCommit(fn func(ctx context.Context, tx *stdsql.Tx, attempt int) error) {
	b.beforeCommit = fn
}

// Exec runs a statement written with ? placeholders on b's pool.
func (b *backend) Exec(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	return b.exec(ctx, b.db, query, args...)
}

// StoredRefs returns the reference count of every part stored in ns.
func (b *backend) StoredRefs(ctx context.Context, ns string) (map[string]int, error) {
	rows, err := b.query(ctx, b.db, "SELECT digest, refs FROM helmstore_parts WHERE namespace = ?", ns)
	if err != nil {
		return nil, err
	}
	return scanRefs(rows)
}

// BeginTx begins a transaction on b's pool as b's writes do (at the
// dialect's isolation level), for tests that hold row locks.
func (b *backend) BeginTx(ctx context.Context) (*stdsql.Tx, error) {
	return b.db.BeginTx(ctx, b.d.TxOptions)
}

// ExecTx runs a statement written with ? placeholders in tx.
func (b *backend) ExecTx(ctx context.Context, tx *stdsql.Tx, query string, args ...any) (stdsql.Result, error) {
	return b.exec(ctx, tx, query, args...)
}

// QueryInt runs a query written with ? placeholders on b's pool and
// returns the integer it answers.
func (b *backend) QueryInt(ctx context.Context, query string, args ...any) (int, error) {
	rows, err := b.query(ctx, b.db, query, args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	if rows.Next() {
		err = rows.Scan(&n)
	}
	if err == nil {
		err = rows.Err()
	}
	return n, err
}

// ListStatement returns the statement List runs for q and its arguments,
// with ? placeholders.
func (b *Backend) ListStatement(q driver.ListQuery) (string, []any) {
	return listQuery(q, b.d)
}
