package postgres

import (
	"context"
	stdsql "database/sql"
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/helmstore/helmstore/driver"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/helmstore/helmstore/sql/sqlbackend"
)

func pgCode(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

//go:embed migrations/*.sql
var migrations embed.FS

// Name is the HELM_DRIVER name the package registers.
const Name = "postgres"

func init() {
	driver.Register(Name, Open)
}

// dialect is PostgreSQL's: $n placeholders, RETURNING, row locks, and
// migrations under an advisory lock per schema. Its default isolation (READ
// COMMITTED) is what the engine's writers need.
var dialect = sqlbackend.Dialect{
	Name:           "postgres",
	Goose:          goose.DialectPostgres,
	Migrations:     migrations,
	Dollar:         true,
	Returning:      true,
	ForUpdate:      " FOR UPDATE",
	LatestRevision: "NOT EXISTS (SELECT 1 FROM helmstore_releases m WHERE m.namespace = r.namespace AND m.name = r.name AND m.version > r.version)",
	IsUnique:       func(err error) bool { return pgCode(err) == "23505" },
	IsDeadlock:     func(err error) bool { return pgCode(err) == "40P01" },
	IsUnavailable: func(err error) bool {
		if errors.Is(err, context.DeadlineExceeded) || pgconn.Timeout(err) || errors.Is(err, pgconn.ErrConnClosed) {
			return true
		}
		code := pgCode(err)
		// Connection exception (08), insufficient resources (53: too many
		// connections, out of memory, disk full), operator intervention
		// (57P01 admin shutdown, as pg_terminate_backend sends; crash
		// shutdown; cannot connect now), and query_canceled (57014: the
		// statement_timeout the store's operation bound sets).
		return strings.HasPrefix(code, "08") || strings.HasPrefix(code, "53") || strings.HasPrefix(code, "57P") || code == "57014"
	},
	// Invalid authorization (28000: no such role, no pg_hba entry; 28P01:
	// a wrong password) and insufficient privilege (42501).
	IsDenied: func(err error) bool {
		code := pgCode(err)
		return strings.HasPrefix(code, "28") || code == "42501"
	},
	IsRetryable: func(err error) bool {
		switch pgCode(err) {
		case "40001", "40P01", "55P03": // serialization failure, deadlock, lock not available
			return true
		}
		return false
	},
	LockMigrations: func(ctx context.Context, db *stdsql.DB) (goose.ProviderOption, func(), error) {
		// One advisory lock per schema, so stores in different schemas of
		// one database migrate independently.
		var schema stdsql.NullString
		if err := db.QueryRowContext(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			return nil, nil, err
		}
		if !schema.Valid {
			var path string
			db.QueryRowContext(ctx, "SHOW search_path").Scan(&path)
			// current_schema() skips schemas the role may not use: one
			// of those is a privilege to grant, not a schema to create.
			var denied, role string
			err := db.QueryRowContext(ctx, `SELECT n.nspname, current_user FROM pg_namespace n
				WHERE n.nspname = ANY(string_to_array(replace(replace(current_setting('search_path'), ' ', ''), '"', ''), ','))
				AND NOT has_schema_privilege(n.oid, 'USAGE') LIMIT 1`).Scan(&denied, &role)
			if err == nil {
				return nil, nil, fmt.Errorf("no schema to store releases in: role %q may not use schema %q of search_path (GRANT USAGE, CREATE ON SCHEMA %s TO %s): %w", role, denied, denied, role, driver.ErrAccessDenied)
			}
			return nil, nil, fmt.Errorf("no schema to store releases in: no schema of search_path %q exists (create it first)", path)
		}
		h := fnv.New64a()
		h.Write([]byte("helmstore/" + schema.String))
		l, err := lock.NewPostgresSessionLocker(lock.WithLockID(int64(h.Sum64()>>1)), lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, nil, err
		}
		return goose.WithSessionLocker(l), func() {}, nil
	},
}

// Open opens a PostgreSQL backend (the driver.Opener registered as Name). The connection string is anything
// pgx.ParseConfig accepts: a postgres:// URL or a key=value DSN.
func Open(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
	if cfg.ConnectionString == "" {
		return nil, fmt.Errorf("no connection string: set %s to a postgres:// URL", driver.ConnectionStringEnv("postgres"))
	}
	pc, err := postgresConfig(cfg.ConnectionString, cfg.Timeout)
	if err != nil {
		return nil, err
	}
	return sqlbackend.Open(ctx, stdlib.GetConnector(*pc), dialect, cfg)
}

// Connection defaults, each used unless the connection string (or the
// PGCONNECT_TIMEOUT variable) sets its own.
const (
	// pgConnectTimeout bounds establishing a connection (connect_timeout).
	pgConnectTimeout = 10 * time.Second
	// TCP keepalive (keepalives_idle, keepalives_interval,
	// keepalives_count): a connection whose peer vanished without closing
	// it fails after about a minute of silence instead of hanging until
	// the operating system gives up (hours).
	pgKeepaliveIdle     = 30 * time.Second
	pgKeepaliveInterval = 10 * time.Second
	pgKeepaliveCount    = 3
)

// postgresConfig parses conn and sets what bounds every statement:
//
//   - a connect timeout and TCP keepalive, unless conn sets them (the libpq
//     keepalives, keepalives_idle, keepalives_interval and keepalives_count
//     parameters are honoured here; pgx would send them to the server as
//     settings it does not know);
//   - a server-side statement_timeout of timeout (the store's per-operation
//     bound) unless conn sets one, so a statement stops on the server even
//     when its client is gone or cannot reach it (a cancelled context
//     makes pgx close the connection and send a cancel request, which only
//     helps while the server is reachable and the client alive).
func postgresConfig(conn string, timeout time.Duration) (*pgx.ConnConfig, error) {
	pc, err := pgx.ParseConfig(conn)
	if err != nil {
		return nil, fmt.Errorf("invalid connection string: %w", err)
	}
	connectTimeout := pc.ConnectTimeout
	if connectTimeout == 0 && !strings.Contains(conn, "connect_timeout") && os.Getenv("PGCONNECT_TIMEOUT") == "" {
		connectTimeout = pgConnectTimeout
		pc.ConnectTimeout = connectTimeout
	}
	ka := net.KeepAliveConfig{Enable: true, Idle: pgKeepaliveIdle, Interval: pgKeepaliveInterval, Count: pgKeepaliveCount}
	for _, p := range []struct {
		name string
		set  func(n int)
	}{
		{"keepalives", func(n int) { ka.Enable = n != 0 }},
		{"keepalives_idle", func(n int) { ka.Idle = time.Duration(n) * time.Second }},
		{"keepalives_interval", func(n int) { ka.Interval = time.Duration(n) * time.Second }},
		{"keepalives_count", func(n int) { ka.Count = n }},
	} {
		v, ok := pc.RuntimeParams[p.name]
		if !ok {
			continue
		}
		delete(pc.RuntimeParams, p.name)
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("invalid connection string: %s=%q is not a non-negative integer", p.name, v)
		}
		p.set(n)
	}
	dialer := &net.Dialer{Timeout: connectTimeout, KeepAliveConfig: ka}
	if !ka.Enable {
		dialer.KeepAlive = -1
	}
	pc.DialFunc = dialer.DialContext
	if _, ok := pc.RuntimeParams["statement_timeout"]; !ok && timeout > 0 {
		pc.RuntimeParams["statement_timeout"] = strconv.FormatInt(max(timeout.Milliseconds(), 1), 10)
	}
	return pc, nil
}
