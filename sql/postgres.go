package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"hash/fnv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
)

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

var postgresDialect = dialect{
	name:      "postgres",
	goose:     goose.DialectPostgres,
	dollar:    true,
	returning: true,
	forUpdate: " FOR UPDATE",
	isUnique:  func(err error) bool { return pgCode(err) == "23505" },
	isRetryable: func(err error) bool {
		switch pgCode(err) {
		case "40001", "40P01", "55P03": // serialization failure, deadlock, lock not available
			return true
		}
		return false
	},
	lockMigrations: func(ctx context.Context, db *stdsql.DB) (goose.ProviderOption, func(), error) {
		// One advisory lock per schema, so stores in different schemas of
		// one database migrate independently.
		var schema string
		if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			return nil, nil, err
		}
		h := fnv.New64a()
		h.Write([]byte("helmstore/" + schema))
		l, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64()>>1)), lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, nil, err
		}
		return goose.WithSessionLocker(l), func() {}, nil
	},
}

// openPostgres opens a PostgreSQL store. conn is anything pgx.ParseConfig
// accepts: a postgres:// URL or a key=value DSN.
func openPostgres(ctx context.Context, cfg *driver.Config) (driver.Store, error) {
	if cfg.ConnectionString == "" {
		return nil, fmt.Errorf("no connection string: set %s to a postgres:// URL", driver.ConnectionStringEnv("postgres"))
	}
	pc, err := pgx.ParseConfig(cfg.ConnectionString)
	if err != nil {
		return nil, fmt.Errorf("invalid connection string: %w", err)
	}
	db := stdlib.OpenDB(*pc)
	db.SetMaxIdleConns(16)
	b, err := newBackend(ctx, db, &postgresDialect)
	if err != nil {
		return nil, err
	}
	return engine.New(b, cfg), nil
}

// newBackend checks the connection, migrates, and returns the backend.
func newBackend(ctx context.Context, db *stdsql.DB, d *dialect) (*backend, error) {
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	if err := migrate(ctx, db, d); err != nil {
		db.Close()
		return nil, err
	}
	return &backend{db: db, d: d, retries: 8}, nil
}
