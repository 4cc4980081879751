package sqlbackend

import (
	"context"
	stdsql "database/sql"
	sqldriver "database/sql/driver"
	"fmt"
	"time"

	"github.com/helmstore/helmstore/driver"
)

// Pool settings of every dialect but one whose database lives in its one
// connection (Dialect.OneConnection).
const (
	// maxIdleConns: enough idle connections for Helm's concurrent reads
	// and a few writers, without reconnecting between operations.
	maxIdleConns = 16
	// connMaxLifetime: connections are renewed now and then, so that a
	// pool follows a server's failover or a load balancer's changes.
	connMaxLifetime = 30 * time.Minute
	// txRetries bounds how often a transaction that hit a deadlock, a
	// serialization failure or a lock timeout is run again.
	txRetries = 8
)

// Open is what every dialect's driver.Opener does once it has turned its
// connection string into a connector and its Dialect: it opens a pool on
// connector, checks the connection, lets the dialect adapt itself to the
// database (Dialect.Prepare, on d, a copy), brings the schema up to date
// (under the dialect's migration lock) and returns the backend, all within
// cfg.Timeout. Close closes the pool, and so does a failed Open. A failure to reach the server wraps
// driver.ErrUnavailable.
func Open(ctx context.Context, connector sqldriver.Connector, d Dialect, cfg *driver.Config) (driver.Backend, error) {
	db := stdsql.OpenDB(connector)
	if d.OneConnection {
		db.SetMaxOpenConns(1)
	} else {
		db.SetMaxIdleConns(maxIdleConns)
		db.SetConnMaxLifetime(connMaxLifetime)
	}
	b := &backend{db: db, d: &d, retries: txRetries, log: cfg.Log}
	if cfg.Timeout > 0 {
		// Open is an operation like any other: bounded, so that a server
		// that stops answering fails it rather than hanging in a dial,
		// a handshake or a migration lock.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	if err := b.prepare(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return b, nil
}

// prepare checks the connection, adapts the dialect and migrates.
func (b *backend) prepare(ctx context.Context) error {
	if err := b.db.PingContext(ctx); err != nil {
		return fmt.Errorf("connect: %w", b.classify(err))
	}
	if b.d.Prepare != nil {
		if err := b.d.Prepare(ctx, b.db, b.d); err != nil {
			return fmt.Errorf("connect: %w", b.classify(err))
		}
	}
	if err := migrate(ctx, b.db, b.d); err != nil {
		return b.classify(err)
	}
	return nil
}
