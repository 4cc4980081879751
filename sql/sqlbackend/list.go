package sqlbackend

import (
	"context"
	stdsql "database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/helmstore/helmstore/driver"
)

// listColumns are what List reads of a head: its index fields, labels and
// summary, never its digests or body.
var listCols = strings.Split(`namespace, release_key, name, version, status, owner, created_at, modified_at, labels, `+summaryColumns, ", ")

// List returns the heads q selects with their summary, in one statement
// (listQuery) that selects, orders and limits them with the indexes: no
// body and no part is read.
func (b *backend) List(ctx context.Context, q driver.ListQuery) ([]*driver.Head, error) {
	query, args := listQuery(q, b.d)
	rows, err := b.query(ctx, b.db, query, args...)
	if err != nil {
		return nil, b.classify(err)
	}
	hs, err := scanList(rows)
	return hs, b.classify(err)
}

// listQuery returns the statement of List and its arguments. Namespaces
// and names compare byte by byte in every dialect (PostgreSQL's columns
// collate "C", MySQL's are binary, SQLite's compare as BINARY), as Go
// compares strings, so that the order, the cursor and the name prefix (a
// range of names, which the index serves) are driver.CompareHeads'. The
// latest revision of a release is chosen among all of its rows, before
// statuses and labels apply, by the dialect's LatestRevision or by a
// correlated MAX, which reads one entry of the (namespace, name, version)
// index per row; or, for a whole listing (no Limit) on a dialect with
// LatestFrom, by a join with each release's MAX grouped from that index.
func listQuery(q driver.ListQuery, d *Dialect) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, vs ...any) { where = append(where, cond); args = append(args, vs...) }
	if q.Namespace != "" {
		add("r.namespace = ?", q.Namespace)
	}
	if q.NamePrefix != "" {
		if end, ok := prefixEnd(q.NamePrefix); ok {
			add("r.name >= ? AND r.name < ?", q.NamePrefix, end)
		} else {
			add("r.name >= ?", q.NamePrefix)
		}
	}
	if c := q.After; c != nil {
		// Spelled out rather than as a row value, (a, b) > (?, ?), which
		// MySQL does not read with an index; the leading >= does.
		if q.Latest {
			add("r.namespace >= ? AND (r.namespace > ? OR r.name > ?)", c.Namespace, c.Namespace, c.Name)
		} else {
			add("r.namespace >= ? AND (r.namespace > ? OR r.name > ? OR (r.name = ? AND r.version > ?))",
				c.Namespace, c.Namespace, c.Name, c.Name, c.Version)
		}
	}
	from := " FROM helmstore_releases r"
	if q.Latest && q.Limit == 0 && d.LatestFrom != "" {
		// The conditions so far are on a release's key: they select the
		// groups, from the index alone.
		inner := "SELECT k.namespace, k.name, MAX(k.version) AS version FROM " + d.LatestFrom
		if len(where) > 0 {
			inner += " WHERE " + strings.ReplaceAll(strings.Join(where, " AND "), "r.", "k.")
		}
		join := d.LatestJoin
		if join == "" {
			join = "JOIN helmstore_releases r"
		}
		from = " FROM (" + inner + " GROUP BY k.namespace, k.name) m " + join +
			" ON r.namespace = m.namespace AND r.name = m.name AND r.version = m.version"
		where = nil
	} else if q.Latest {
		latest := d.LatestRevision
		if latest == "" {
			latest = "r.version = (SELECT MAX(m.version) FROM helmstore_releases m WHERE m.namespace = r.namespace AND m.name = r.name)"
		}
		where = append(where, latest)
	}
	if len(q.Statuses) > 0 {
		add("r.status IN ("+placeholders(len(q.Statuses))+")", anys(q.Statuses)...)
	}
	if len(q.Labels) > 0 {
		// One subquery whatever the number of labels: the primary key
		// (namespace, release_key, label_key) holds one row per label key
		// of a release, so it has them all when n of its rows match.
		keys := make([]string, 0, len(q.Labels))
		for k := range q.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		conds := make([]string, len(keys))
		var sub []any
		for i, k := range keys {
			conds[i] = "(l.label_key = ? AND l.label_value = ?)"
			sub = append(sub, k, q.Labels[k])
		}
		add("(SELECT COUNT(*) FROM helmstore_labels l WHERE l.namespace = r.namespace AND l.release_key = r.release_key AND "+
			orTree(conds)+") = "+strconv.Itoa(len(keys)), sub...)
	}
	query := "SELECT " + prefixed("r.", strings.Join(listCols, ", ")) + from
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY r.namespace, r.name, r.version"
	if q.Limit > 0 {
		query += " LIMIT " + strconv.Itoa(q.Limit)
	}
	return query, args
}

// prefixEnd returns the least string above every string that starts with
// p, which is valid UTF-8 if p is: p with its last character the next one.
// False: there is none (p is all U+10FFFF, or bytes 0xFF).
func prefixEnd(p string) (string, bool) {
	if !utf8.ValidString(p) {
		b := []byte(p)
		for i := len(b) - 1; i >= 0; i-- {
			if b[i] < 0xff {
				b[i]++
				return string(b[:i+1]), true
			}
		}
		return "", false
	}
	for p != "" {
		r, n := utf8.DecodeLastRuneInString(p)
		p = p[:len(p)-n]
		switch {
		case r == 0xd7ff:
			return p + "\ue000", true // past the surrogates, which UTF-8 cannot hold
		case r < utf8.MaxRune:
			return p + string(r+1), true
		}
	}
	return "", false
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// scanList reads rows of listCols. A row one of whose values is NULL or of
// another type, or whose labels do not parse, is returned with Err, as
// Heads returns it (headRow.head).
func scanList(rows *stdsql.Rows) ([]*driver.Head, error) {
	defer rows.Close()
	var out []*driver.Head
	dest, v := row(len(listCols))
	for rows.Next() {
		clear(v)
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		c := values{cols: listCols}
		h := &driver.Head{}
		h.Namespace, h.Key, h.Name = c.text(0, v[0]), c.text(1, v[1]), c.text(2, v[2])
		h.Version = c.int(3, v[3])
		h.Status, h.Owner = c.text(4, v[4]), c.text(5, v[5])
		h.CreatedAt, h.ModifiedAt = c.integer(6, v[6]), c.integer(7, v[7])
		labels := c.bytes(8, v[8])
		h.HasSummary = c.bool(9, v[9])
		h.ChartName, h.ChartVersion, h.AppVersion = c.text(10, v[10]), c.text(11, v[11]), c.text(12, v[12])
		h.Updated, h.Description = c.text(13, v[13]), c.text(14, v[14])
		switch {
		case c.err != nil:
			h.Err = fmt.Errorf("release %q in namespace %q: %w: %v", h.Key, h.Namespace, driver.ErrCorrupt, c.err)
		default:
			if err := json.Unmarshal(labels, &h.Labels); err != nil {
				h.Labels = nil
				h.Err = fmt.Errorf("release %q in namespace %q: %w: labels: %v", h.Key, h.Namespace, driver.ErrCorrupt, err)
			}
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
