package mysql

import (
	"context"
	stdsql "database/sql"
	sqldriver "database/sql/driver"
	"embed"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/helmstore/helmstore/driver"

	gomysql "github.com/go-sql-driver/mysql"
	"github.com/pressly/goose/v3"

	"github.com/helmstore/helmstore/sql/sqlbackend"
)

func mysqlCode(err error) uint16 {
	var me *gomysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

//go:embed migrations/*.sql
var migrations embed.FS

// Name is the HELM_DRIVER name the package registers.
const Name = "mysql"

func init() {
	driver.Register(Name, Open)
}

// dialect is MySQL's and MariaDB's: ? placeholders, ON DUPLICATE KEY
// UPDATE, row locks, migrations under a named lock. Write transactions run
// at READ COMMITTED: at InnoDB's default REPEATABLE READ, gap locks on the
// labels, parts and chunks indexes make writers of unrelated releases
// deadlock each other. Nothing a write transaction decides rests on a
// snapshot: heads are read with FOR UPDATE and reference counts are changed
// under the part rows' locks, and the parts a Delete reads are kept by the
// locked head's own references.
var dialect = sqlbackend.Dialect{
	Name:           "mysql",
	Goose:          goose.DialectMySQL,
	Migrations:     migrations,
	ForUpdate:      " FOR UPDATE",
	LatestRevision: "r.version = (SELECT MAX(m.version) FROM helmstore_releases m FORCE INDEX (helmstore_releases_list) WHERE m.namespace = r.namespace AND m.name = r.name)",
	LatestFrom:     "helmstore_releases k FORCE INDEX (helmstore_releases_list) IGNORE INDEX FOR GROUP BY (helmstore_releases_list)",
	LatestJoin:     "STRAIGHT_JOIN helmstore_releases r FORCE INDEX (helmstore_releases_list)",
	TxOptions:      &stdsql.TxOptions{Isolation: stdsql.LevelReadCommitted},
	IsUnique:       func(err error) bool { return mysqlCode(err) == 1062 },
	IsDeadlock:     func(err error) bool { return mysqlCode(err) == 1213 },
	IsUnavailable: func(err error) bool {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, gomysql.ErrInvalidConn) || errors.Is(err, gomysql.ErrPktSync) {
			return true
		}
		switch mysqlCode(err) {
		// Too many connections, server shutdown, query interrupted (KILL
		// QUERY), max_user_connections, connection killed (MariaDB),
		// statement timeout (MariaDB's max_statement_time, MySQL's
		// max_execution_time), disconnected for inactivity (MySQL 8).
		case 1040, 1053, 1317, 1203, 1927, 1969, 3024, 4031:
			return true
		}
		return false
	},
	// Parts are chunked under the server's max_allowed_packet, so users
	// never need to raise it.
	Prepare: func(ctx context.Context, db *stdsql.DB, d *sqlbackend.Dialect) error {
		// One round trip: the packet limit, and whether the tables are
		// NamespaceAccess's views, which take no index hints.
		var maxPacket int
		var kind stdsql.NullString
		err := db.QueryRowContext(ctx, "SELECT @@max_allowed_packet, (SELECT table_type FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'helmstore_releases')").Scan(&maxPacket, &kind)
		if err != nil {
			return err
		}
		d.MaxChunk = chunkSize(maxPacket)
		if kind.String == "VIEW" {
			d.LatestRevision, d.LatestFrom, d.LatestJoin = "", "", ""
		}
		return nil
	},
	IsDenied: func(err error) bool {
		var me *gomysql.MySQLError
		if errors.As(err, &me) && strings.HasPrefix(string(me.SQLState[:]), "28") {
			return true // invalid authorization, whatever the number
		}
		switch mysqlCode(err) {
		// Access denied for the user (a wrong password, an unknown user;
		// 1698: one that may not log in this way), to the database, to a
		// table's command or column, a privilege the statement needs;
		// 1369: a row a view of NamespaceAccess may not hold.
		case 1044, 1045, 1698, 1142, 1143, 1227, 1369, 1370:
			return true
		}
		return false
	},
	IsRetryable: func(err error) bool {
		switch mysqlCode(err) {
		case 1213, 1205: // deadlock, lock wait timeout
			return true
		}
		return false
	},
	LockMigrations: func(ctx context.Context, db *stdsql.DB) (goose.ProviderOption, func(), error) {
		// A named lock held on one connection while goose migrates on others.
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, nil, err
		}
		var got stdsql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(CONCAT('helmstore-migrate-', DATABASE()), 300)").Scan(&got); err != nil {
			conn.Close()
			return nil, nil, err
		}
		if got.Int64 != 1 {
			conn.Close()
			return nil, nil, errors.New("timed out waiting for another process to finish migrating")
		}
		return nil, func() {
			conn.ExecContext(context.Background(), "SELECT RELEASE_LOCK(CONCAT('helmstore-migrate-', DATABASE()))")
			conn.Close()
		}, nil
	},
}

// Open opens a MySQL or MariaDB backend (the driver.Opener registered as
// Name).
func Open(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
	mc, err := mysqlConfig(cfg.ConnectionString)
	if err != nil {
		return nil, err
	}
	if cfg.Log != nil {
		mc.Logger = driverLog(cfg.Log)
	}
	connector, err := gomysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("invalid connection string: %w", err)
	}
	return sqlbackend.Open(ctx, connectBound{connector, mc.Timeout}, dialect, cfg)
}

// connectBound bounds making a connection, the dial and the handshake (TLS
// and MySQL's) alike, by the DSN's timeout (10 s unless it says
// otherwise), as libpq's connect_timeout does: go-sql-driver's own bounds
// only the dial, so a server that accepts a connection and never answers
// (a hung server, a proxy with no backend) held each connection attempt
// for the whole operation's timeout (2 minutes by default).
type connectBound struct {
	sqldriver.Connector
	timeout time.Duration
}

func (c connectBound) Connect(ctx context.Context) (sqldriver.Conn, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	return c.Connector.Connect(ctx)
}

// chunkSize leaves room in a packet for the statement around the chunk.
func chunkSize(maxPacket int) int {
	c := maxPacket/2 - 64<<10
	if c > 8<<20 {
		c = 8 << 20
	}
	if c < 64<<10 {
		c = 64 << 10
	}
	return c
}

// driverLog is the MySQL driver's logger: the store's log, rather than the
// driver's default, which writes to the process's standard error.
type driverLog func(format string, v ...interface{})

// Print logs what the driver says.
func (l driverLog) Print(v ...any) { l("helmstore: mysql driver: %s", fmt.Sprint(v...)) }
