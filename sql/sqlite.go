package sql

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/pressly/goose/v3"
	"helm.sh/helm/v3/pkg/helmpath"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/filelock"
)

func sqliteCode(err error) int {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()
	}
	return 0
}

var sqliteDialect = dialect{
	name:      "sqlite",
	goose:     goose.DialectSQLite3,
	returning: true,
	isUnique: func(err error) bool {
		c := sqliteCode(err)
		return c == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY || c == sqlite3.SQLITE_CONSTRAINT_UNIQUE
	},
	isRetryable: func(err error) bool {
		c := sqliteCode(err) & 0xff
		return c == sqlite3.SQLITE_BUSY || c == sqlite3.SQLITE_LOCKED
	},
}

// DefaultSQLitePath is where the sqlite store lives when no path is given:
// helmstore.db in Helm's data directory ($HELM_DATA_HOME).
func DefaultSQLitePath() string { return helmpath.DataPath("helmstore.db") }

// sqliteDSN turns a path or file: URI into a modernc DSN with the settings
// correctness needs: WAL, a busy timeout, immediate write transactions (so
// two writers queue instead of failing), and full sync unless the caller set
// one.
func sqliteDSN(conn string) (dsn, path string, memory bool, err error) {
	if conn == "" {
		conn = DefaultSQLitePath()
	}
	if conn == ":memory:" {
		return "file::memory:?_pragma=busy_timeout(30000)", "", true, nil
	}
	path, query, _ := strings.Cut(strings.TrimPrefix(conn, "file:"), "?")
	if path == "" {
		return "", "", false, errors.New("sqlite needs a file path")
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", "", false, fmt.Errorf("invalid sqlite URI parameters: %w", err)
	}
	have := strings.Join(q["_pragma"], ",")
	for _, p := range []struct{ name, val string }{{"busy_timeout", "30000"}, {"journal_mode", "WAL"}, {"synchronous", "FULL"}} {
		if !strings.Contains(have, p.name) {
			q.Add("_pragma", p.name+"("+p.val+")")
		}
	}
	q.Set("_txlock", "immediate")
	return "file:" + path + "?" + q.Encode(), path, q.Get("mode") == "memory", nil
}

// openSQLite opens (creating if needed) a SQLite store at a file path.
func openSQLite(ctx context.Context, cfg *driver.Config) (driver.Store, error) {
	dsn, path, memory, err := sqliteDSN(cfg.ConnectionString)
	if err != nil {
		return nil, err
	}
	if path != "" && !memory {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, err
		}
	}
	db, err := stdsql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	if memory {
		// Every connection to :memory: is a new database: keep one.
		db.SetMaxOpenConns(1)
	}
	d := sqliteDialect
	d.lockMigrations = func(ctx context.Context, db *stdsql.DB) (goose.ProviderOption, func(), error) {
		if memory {
			return nil, func() {}, nil
		}
		unlock, err := filelock.Lock(ctx, path+".migrate-lock")
		return nil, unlock, err
	}
	b, err := newBackend(ctx, db, &d)
	if err != nil {
		return nil, err
	}
	return engine.New(b, cfg), nil
}
