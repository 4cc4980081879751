package sqlbackend

import (
	"context"
	stdsql "database/sql"
	"io/fs"
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"
)

// Dialect is what differs between SQL databases: a dialect package (such as
// sql/postgres) fills one in and passes it to Open with a connector.
// The engine writes its statements with ? placeholders; Rebind turns them
// into the dialect's.
type Dialect struct {
	// Name is the database's name in messages ("postgres", "mysql", ...).
	Name string
	// Goose is the pressly/goose dialect that runs Migrations.
	Goose goose.Dialect
	// Migrations holds the dialect's goose migration files (NNNNN_*.sql)
	// in its directory "migrations" (as //go:embed migrations/*.sql makes
	// it). Every dialect creates the same tables (see the package
	// documentation); goose records the applied version in
	// helmstore_schema_version.
	Migrations fs.FS
	// Dollar: placeholders are $1, $2... instead of ?.
	Dollar bool
	// Returning: INSERT ... ON CONFLICT ... DO UPDATE ... RETURNING and
	// UPDATE ... RETURNING work (else MySQL's ON DUPLICATE KEY UPDATE and
	// a SELECT of the rows just written).
	Returning bool
	// ForUpdate is appended to a SELECT that must lock the rows it reads
	// ("" where writers are serialized anyway, as in SQLite).
	ForUpdate string
	// LatestRevision, if set, is the condition on a row r of
	// helmstore_releases that keeps only the latest revision of each
	// release in a listing (default: r.version is the correlated MAX of
	// its release's versions). Each must read the (namespace, name,
	// version) index once per row: MySQL forces it (MariaDB, whose
	// statistics lag a table just filled, took the primary key and read
	// the whole namespace per row); PostgreSQL says NOT EXISTS a newer
	// revision, which it plans as an anti-join (for the MAX it misjudged
	// the rows kept, and sorted the whole table even for one page).
	LatestRevision string
	// LatestFrom, if set, is the table, aliased k, from which a whole
	// listing of latest revisions (no Limit) groups each release's
	// latest version, joined back to its row: one pass over the
	// (namespace, name, version) index rather than a probe per row
	// (MariaDB: a third of the time for 10,000 releases). A page keeps
	// LatestRevision's probe per row, which stops at the page's end.
	// MariaDB reads the index in order rather than by its loose index
	// scan (IGNORE INDEX FOR GROUP BY), which its lagging statistics
	// chose: four descents of the index per release (40,000 pages
	// visited for 10,000 releases) where reading its few revisions'
	// entries in order visits 300.
	LatestFrom string
	// LatestJoin, if set, is the join by which LatestFrom's groups, m,
	// join back to the table, aliased r (default: JOIN helmstore_releases
	// r). MariaDB forces the (namespace, name, version) index: on a table
	// just filled it read the whole namespace per release (minutes for
	// 10,000); and the order, groups first (STRAIGHT_JOIN): with its
	// statistics lagging it read the whole table first, twice the pages.
	LatestJoin string
	// MaxChunk bounds one stored chunk of a part, in bytes (0: no bound).
	MaxChunk int
	// TxOptions are the options of write transactions (nil: the
	// database's defaults).
	TxOptions *stdsql.TxOptions
	// IsUnique reports a unique-key violation.
	IsUnique func(error) bool
	// IsRetryable reports a deadlock, serialization failure or lock
	// timeout: the whole transaction may be run again.
	IsRetryable func(error) bool
	// IsDeadlock reports a deadlock the database detected: the engine
	// logs it (driver.Config.Log) before the transaction is run again.
	// Its writers lock rows in one order, so there should be none: one
	// logged means another program holds locks on the tables, or a bug.
	// Nil: the database reports none.
	IsDeadlock func(error) bool
	// IsUnavailable reports a failure of the server or of the connection
	// to it that only the dialect's driver can tell (a server shutting
	// down, a connection killed, a statement timeout), beyond what the
	// engine recognises for every dialect (network errors, a connection
	// gone bad): it is wrapped with driver.ErrUnavailable. Nil: none.
	IsUnavailable func(error) bool
	// IsDenied reports the server refusing the store's credentials (a
	// wrong password, an unknown user) or a privilege a statement needs:
	// it is wrapped with driver.ErrAccessDenied, a setting to fix rather
	// than an outage. Nil: the database checks neither.
	IsDenied func(error) bool
	// InProcess: the database runs in this process (SQLite), so a query
	// costs no round trip, and Query.Frames, which saves one by reading
	// heads and parts in one statement, is ignored: two plain statements
	// are cheaper than the combined one there.
	InProcess bool
	// OneConnection: the database lives in its connection (SQLite's
	// :memory:), so the pool keeps exactly one, for ever.
	OneConnection bool
	// Prepare, when set, runs once the connection is checked and before
	// migrating, to adapt the dialect to the database (MySQL sizes
	// MaxChunk to the server's max_allowed_packet, and drops its index
	// hints where its tables are views). It changes d, Open's copy of the
	// dialect.
	Prepare func(ctx context.Context, db *stdsql.DB, d *Dialect) error
	// LockMigrations holds a lock across processes while migrating: a goose
	// session locker, or nil and an unlock function for a lock of its own.
	LockMigrations func(ctx context.Context, db *stdsql.DB) (goose.ProviderOption, func(), error)
}

// Rebind returns q with its ? placeholders in the dialect's form.
func (d *Dialect) Rebind(q string) string {
	if !d.Dollar {
		return q
	}
	var b strings.Builder
	b.Grow(len(q) + 16)
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

func (d *Dialect) isDeadlock(err error) bool {
	return d.IsDeadlock != nil && d.IsDeadlock(err)
}
