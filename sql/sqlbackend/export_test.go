package sqlbackend

import (
	"context"
	stdsql "database/sql"
)

// What this package's external tests (which open stores through the
// dialect packages, so cannot be internal) use of its internals.

// Deadlocks returns how many deadlocks the database reported to b's write
// transactions, retried or not.
func (b *Backend) Deadlocks() int64 { return b.deadlocks.Load() }

// Queries returns how many queries b has run.
func (b *Backend) Queries() int64 { return b.queries.Load() }

// SetBeforeCommit makes fn run inside every write transaction of b just
// before it commits (attempt counts the runs of one transaction from 0).
func (b *Backend) SetBeforeCommit(fn func(ctx context.Context, tx *stdsql.Tx, attempt int) error) {
	b.beforeCommit = fn
}

// Exec runs a statement written with ? placeholders on b's pool.
func (b *Backend) Exec(ctx context.Context, query string, args ...any) (stdsql.Result, error) {
	return b.exec(ctx, b.db, query, args...)
}

// StoredRefs returns the reference count of every part stored in ns.
func (b *Backend) StoredRefs(ctx context.Context, ns string) (map[string]int, error) {
	rows, err := b.query(ctx, b.db, "SELECT digest, refs FROM helmstore_parts WHERE namespace = ?", ns)
	if err != nil {
		return nil, err
	}
	return scanRefs(rows)
}
