package sqlite

import (
	"context"
	stdsql "database/sql"
	"embed"
	"errors"

	"github.com/helmstore/helmstore/driver"

	"github.com/pressly/goose/v3"
	modernc "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/helmstore/helmstore/internal/filelock"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

func sqliteCode(err error) int {
	var se *modernc.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

//go:embed migrations/*.sql
var migrations embed.FS

// Name is the HELM_DRIVER name the package registers.
const Name = "sqlite"

func init() {
	driver.Register(Name, Open)
}

// dialect is SQLite's: RETURNING, no row locks (write transactions begin
// IMMEDIATE, so writers are serialized), a file lock around migrations
// (set per database by open).
var dialect = sqlbackend.Dialect{
	Name:       "sqlite",
	Goose:      goose.DialectSQLite3,
	Migrations: migrations,
	Returning:  true,
	InProcess:  true,
	IsUnique: func(err error) bool {
		c := sqliteCode(err)
		return c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || c == sqlite3.SQLITE_CONSTRAINT_UNIQUE
	},
	IsRetryable: func(err error) bool {
		c := sqliteCode(err) & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	},
	// The file cannot be read or written (an I/O error, a full disk).
	IsUnavailable: func(err error) bool {
		c := sqliteCode(err) & 0xff
		return c == sqlite3.SQLITE_IOERR || c == sqlite3.SQLITE_FULL
	},
}

// Open opens (creating if needed) a SQLite backend at a file path (the
// driver.Opener registered as Name). The file's
// directory must exist, unless it is the default location.
func Open(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
	dsn, path, memory, err := dsnOf(cfg.ConnectionString)
	if err != nil {
		return nil, err
	}
	if path != "" && !memory {
		if err := sqliteDir(path, cfg.ConnectionString == ""); err != nil {
			return nil, err
		}
	}
	connector, err := modernc.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	d := dialect
	// Every connection to :memory: is a new database: keep one.
	d.OneConnection = memory
	d.LockMigrations = func(ctx context.Context, db *stdsql.DB) (goose.ProviderOption, func(), error) {
		if memory {
			return nil, func() {}, nil
		}
		// The lock file gets the database's owner and mode, so that a run
		// as root does not lock the database's owner out.
		unlock, err := filelock.LockLike(ctx, path+".migrate-lock", path)
		return nil, unlock, err
	}
	return sqlbackend.Open(ctx, lockConnector{connector}, d, cfg)
}
