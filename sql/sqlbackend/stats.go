package sqlbackend

import (
	"context"

	"github.com/helmstore/helmstore/driver"
)

// Stats counts heads and parts, and sums their stored sizes.
func (b *backend) Stats(ctx context.Context, ns string) (driver.Stats, error) {
	s, err := b.stats(ctx, ns)
	return s, b.classify(err)
}

func (b *backend) stats(ctx context.Context, ns string) (driver.Stats, error) {
	s := driver.Stats{Parts: map[string]int{}}
	where, args := "", []any{}
	if ns != "" {
		where, args = " WHERE namespace = ?", []any{ns}
	}
	// The heads' count and bytes (labels column, body, labels rows) in one
	// statement: each table a scalar subquery under the same filter.
	q := "SELECT (SELECT COUNT(*) FROM helmstore_releases" + where + "), " +
		"(SELECT COALESCE(SUM(LENGTH(labels)), 0) FROM helmstore_releases" + where + ") + " +
		"(SELECT COALESCE(SUM(LENGTH(body)), 0) FROM helmstore_bodies" + where + ") + " +
		"(SELECT COALESCE(SUM(LENGTH(label_key) + LENGTH(label_value)), 0) FROM helmstore_labels" + where + ")"
	var all []any
	for range 4 {
		all = append(all, args...)
	}
	if err := b.db.QueryRowContext(ctx, b.d.Rebind(q), all...).Scan(&s.Releases, &s.HeadBytes); err != nil {
		return s, err
	}
	rows, err := b.query(ctx, b.db, "SELECT kind, COUNT(*), COALESCE(SUM(raw_size), 0) FROM helmstore_parts"+where+" GROUP BY kind", args...)
	if err != nil {
		return s, err
	}
	defer rows.Close()
	for rows.Next() {
		var kind string
		var n int
		var raw int64
		if err := rows.Scan(&kind, &n, &raw); err != nil {
			return s, err
		}
		s.Parts[kind] = n
		s.RawPartBytes += raw
	}
	if err := rows.Err(); err != nil {
		return s, err
	}
	err = b.db.QueryRowContext(ctx, b.d.Rebind("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM helmstore_part_chunks"+where), args...).Scan(&s.PartBytes)
	return s, err
}
