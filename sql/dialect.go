package sql

import (
	"context"
	stdsql "database/sql"
	"strconv"
	"strings"

	"github.com/pressly/goose/v3"
)

// dialect is what differs between SQL databases. The engine writes queries
// with ? placeholders; rebind turns them into the dialect's.
type dialect struct {
	name  string
	goose goose.Dialect
	// dollar placeholders ($1, $2...) instead of ?.
	dollar bool
	// returning: INSERT ... ON CONFLICT ... RETURNING works (else MySQL's
	// ON DUPLICATE KEY UPDATE plus a SELECT).
	returning bool
	// forUpdate is appended to a SELECT that must lock the rows it reads.
	forUpdate string
	// maxChunk bounds one stored chunk of a part (0: no bound).
	maxChunk int
	// isUnique reports a unique-key violation.
	isUnique func(error) bool
	// isRetryable reports a deadlock, serialization failure or lock timeout:
	// the whole transaction may be run again.
	isRetryable func(error) bool
	// lockMigrations holds a lock across processes while migrating.
	lockMigrations func(ctx context.Context, db *stdsql.DB) (goose.ProviderOption, func(), error)
}

func (d *dialect) rebind(q string) string {
	if !d.dollar {
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

// writeTx returns the options of write transactions. MySQL's are READ
// COMMITTED: at its default REPEATABLE READ, InnoDB takes gap locks on the
// labels, parts and chunks indexes that make writers of unrelated releases
// deadlock each other. Nothing a write transaction decides rests on a
// snapshot: heads are read with FOR UPDATE and reference counts are changed
// under the part rows' locks, and the parts a Delete reads are kept by the
// locked head's own references. PostgreSQL's default is READ COMMITTED
// already; SQLite serializes writers.
func (d *dialect) writeTx() *stdsql.TxOptions {
	if d.name == "mysql" {
		return &stdsql.TxOptions{Isolation: stdsql.LevelReadCommitted}
	}
	return nil
}

// isDeadlock reports a deadlock detected by PostgreSQL (SQLSTATE 40P01) or
// MySQL (error 1213).
func isDeadlock(err error) bool {
	return pgCode(err) == "40P01" || mysqlCode(err) == 1213
}
