package sqlbackend

import (
	"context"
	stdsql "database/sql"
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"time"

	"github.com/helmstore/helmstore/driver"
)

// backend is driver.Backend over a database/sql pool and a Dialect: what
// Open returns, and what the engine under a SQL store holds. Tests reach
// its pool and dialect through DB and Dialect (internal/sqltest.BackendOf).
type backend struct {
	db *stdsql.DB
	d  *Dialect
	// retries bounds how often a transaction that hit a deadlock, a
	// serialization failure or a lock timeout is run again (txRetries).
	retries int
	// beforeCommit, when set (by tests), runs inside every write
	// transaction just before it commits.
	beforeCommit func(ctx context.Context, tx *stdsql.Tx, attempt int) error
	// deadlocks counts the deadlocks the database reported to write
	// transactions (retried or not), each also logged: writers take their
	// locks in one order, so there should be none.
	deadlocks atomic.Int64
	// log is the store's debug log (driver.Config.Log), or nil.
	log func(format string, v ...interface{})
	// queries counts the queries run (SELECTs and statements returning
	// rows), for tests of how many round trips a read takes.
	queries atomic.Int64
}

var _ driver.Backend = (*backend)(nil)

// Tables returns the tables a store keeps releases in, each with a
// namespace column (the schema's version table aside): what a grant or
// policy confining a role to namespaces must cover.
func Tables() []string {
	return []string{"helmstore_releases", "helmstore_bodies", "helmstore_labels", "helmstore_parts", "helmstore_part_chunks"}
}

// releaseColumns are a head's columns in helmstore_releases, the table a
// listing reads: all of it but its body.
const releaseColumns = `namespace, release_key, name, version, status, owner, created_at, modified_at, labels, chart_digest, values_digest, manifest_digest, values_base, manifest_base`

// headColumns are the names of a head's columns as Heads reads them:
// releaseColumns and its body, kept in helmstore_bodies under the same
// namespace and key (selectHead).
const headColumns = releaseColumns + `, body`

// selectHead is the select list of headColumns over helmstore_releases
// aliased r: the body a subquery, NULL if the body's row is missing (the
// head then reads as corrupt rather than vanishing, and stays deletable).
var selectHead = prefixed("r.", releaseColumns) +
	", (SELECT b.body FROM helmstore_bodies b WHERE b.namespace = r.namespace AND b.release_key = r.release_key) AS body"

// DB returns the connection pool the backend uses.
func (b *backend) DB() *stdsql.DB { return b.db }

// Dialect returns the backend's dialect.
func (b *backend) Dialect() *Dialect { return b.d }

// Close closes the connection pool.
func (b *backend) Close() error { return b.db.Close() }

// tx runs fn in a transaction, again (with backoff) when the dialect calls
// the failure retryable. Any other error, and fn's own, is returned as is,
// wrapped with driver.ErrUnavailable if the server failed (classify).
func (b *backend) tx(ctx context.Context, fn func(tx *stdsql.Tx) error) error {
	return b.classify(b.retry(ctx, fn))
}

func (b *backend) retry(ctx context.Context, fn func(tx *stdsql.Tx) error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = b.tryTx(ctx, attempt, fn)
		if err != nil && b.d.isDeadlock(err) {
			b.deadlocks.Add(1)
			if b.log != nil {
				b.log("helmstore: %s reported a deadlock to a write transaction (attempt %d): %v", b.d.Name, attempt+1, err)
			}
		}
		if err == nil || !b.d.IsRetryable(err) || attempt >= b.retries {
			return err
		}
		backoff := time.Duration(5<<min(attempt, 6)) * time.Millisecond
		backoff += time.Duration(rand.Int64N(int64(backoff)))
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(backoff):
		}
	}
}

func (b *backend) tryTx(ctx context.Context, attempt int, fn func(tx *stdsql.Tx) error) error {
	tx, err := b.db.BeginTx(ctx, b.d.TxOptions)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if b.beforeCommit != nil {
		if err := b.beforeCommit(ctx, tx, attempt); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error)
}

func (b *backend) exec(ctx context.Context, q querier, query string, args ...any) (stdsql.Result, error) {
	return q.ExecContext(ctx, b.d.Rebind(query), args...)
}

func (b *backend) query(ctx context.Context, q querier, query string, args ...any) (*stdsql.Rows, error) {
	b.queries.Add(1)
	return q.QueryContext(ctx, b.d.Rebind(query), args...)
}

// placeholders returns "?,?,?" for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
