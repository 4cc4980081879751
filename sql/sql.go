package sql

import (
	_ "github.com/helmstore/helmstore/sql/mysql"    // registers mysql
	_ "github.com/helmstore/helmstore/sql/postgres" // registers postgres
	"github.com/helmstore/helmstore/sql/sqlite"     // registers sqlite
)

// DefaultSQLitePath is where the sqlite store lives when no path is given;
// it is sqlite.DefaultPath, kept here for programs written before the
// dialects had packages of their own.
func DefaultSQLitePath() string { return sqlite.DefaultPath() }

// LockedError is sqlite.LockedError: another writer held the SQLite
// database's write lock for as long as an operation could wait.
type LockedError = sqlite.LockedError
