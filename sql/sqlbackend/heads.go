package sqlbackend

import (
	"context"
	stdsql "database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/helmstore/helmstore/driver"
)

// headCols are the names of headColumns, in order.
var headCols = strings.Split(headColumns, ", ")

// headRow is one row of headColumns, scanned as stored values (values.go).
type headRow struct {
	dest, vals []any
}

func newHeadRow() *headRow {
	r := &headRow{}
	r.dest, r.vals = row(len(headCols))
	return r
}

// head returns the head scanned. A row whose labels or digests do not
// parse, or one of whose values is NULL or of another type, does not fail
// the whole read: its head carries Err (wrapping driver.ErrCorrupt and
// naming the release, as Head.SetDigestText does) with Namespace, Key and
// whatever else parsed, so one damaged release cannot hide the others.
func (r *headRow) head() *driver.Head {
	c := values{cols: headCols}
	v := r.vals
	var h driver.Head
	var t driver.DigestText
	h.Namespace, h.Key, h.Name = c.text(0, v[0]), c.text(1, v[1]), c.text(2, v[2])
	h.Version = c.int(3, v[3])
	h.Status, h.Owner = c.text(4, v[4]), c.text(5, v[5])
	h.CreatedAt, h.ModifiedAt = c.integer(6, v[6]), c.integer(7, v[7])
	labels := c.bytes(8, v[8])
	t.Chart, t.Values, t.Manifest, t.ValuesBase, t.ManifestBase = c.text(9, v[9]), c.text(10, v[10]), c.text(11, v[11]), c.text(12, v[12]), c.text(13, v[13])
	h.Body = c.bytes(14, v[14])
	if c.err != nil {
		h.Labels = nil
		h.Err = fmt.Errorf("release %q in namespace %q: %w: %v", h.Key, h.Namespace, driver.ErrCorrupt, c.err)
		return &h
	}
	var labelsErr error
	if err := json.Unmarshal(labels, &h.Labels); err != nil {
		h.Labels = nil
		labelsErr = fmt.Errorf("release %q in namespace %q: %w: labels: %v", h.Key, h.Namespace, driver.ErrCorrupt, err)
	}
	h.Err = errors.Join(labelsErr, h.SetDigestText(t))
	return &h
}

// scanHeads reads rows of headColumns.
func scanHeads(rows *stdsql.Rows) ([]*driver.Head, error) {
	defer rows.Close()
	var out []*driver.Head
	for rows.Next() {
		r := newHeadRow()
		if err := rows.Scan(r.dest...); err != nil {
			return nil, err
		}
		out = append(out, r.head())
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Heads returns the heads matching q in one query; custom labels are matched
// by the database through the indexed labels table. With q.Frames the same
// statement reads the frames of the heads' parts (headsWithFrames).
func (b *backend) Heads(ctx context.Context, q driver.Query) ([]*driver.Head, error) {
	query, args := headQuery(q)
	if q.Frames && !b.d.InProcess {
		hs, err := b.headsWithFrames(ctx, query, args)
		return hs, b.classify(err)
	}
	rows, err := b.query(ctx, b.db, query+" ORDER BY r.namespace, r.name, r.version", args...)
	if err != nil {
		return nil, b.classify(err)
	}
	hs, err := scanHeads(rows)
	return hs, b.classify(err)
}

// headsWithFrames runs the head query and, in the same statement, reads
// the chunks of every part the heads it selects reference (bases
// included), which it returns in Head.Frames: a reader with nothing cached
// gets a release in one round trip instead of two. A part referenced from
// several namespaces is read from one, the first in namespace order, and
// given to that namespace's heads only: the engine reads from that copy
// first, and from another namespace's (through Parts) only if it fails,
// as it does without Frames. The chunk rows ride in the head columns
// (release_key the digest, version the seq, body the data); the statement
// has no ORDER BY, which would sort the chunks' bytes: heads are sorted
// here, chunks joined by seq.
func (b *backend) headsWithFrames(ctx context.Context, query string, args []any) ([]*driver.Head, error) {
	var digests []string
	for _, col := range []string{"chart_digest", "values_digest", "manifest_digest", "values_base", "manifest_base"} {
		digests = append(digests, "SELECT namespace, "+col+" AS d FROM h")
	}
	stmt := "WITH h AS (" + query + ") SELECT 0 AS k, " + headColumns + " FROM h UNION ALL " +
		"SELECT 1, c.namespace, c.digest, '', c.seq, '', '', 0, 0, '', '', '', '', '', '', c.data FROM helmstore_part_chunks c JOIN (" +
		"SELECT MIN(namespace) AS namespace, d FROM (" + strings.Join(digests, " UNION ") + ") u WHERE d <> '' GROUP BY d" +
		") x ON c.namespace = x.namespace AND c.digest = x.d"
	rows, err := b.query(ctx, b.db, stmt, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var hs []*driver.Head
	chunks := chunkSet{}
	for rows.Next() {
		var kind int
		r := newHeadRow()
		if err := rows.Scan(append([]any{&kind}, r.dest...)...); err != nil {
			return nil, err
		}
		if kind == 0 {
			hs = append(hs, r.head())
		} else {
			// A chunk: its namespace, digest, seq and data ride in the
			// columns of namespace, release_key, version and body.
			chunks.scanned(r.vals[0], r.vals[1], r.vals[3], r.vals[14])
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	driver.SortHeads(hs)
	frames := chunks.frames()
	for _, h := range hs {
		if h.Err != nil {
			continue
		}
		for _, ref := range h.Parts() {
			if f, ok := frames[nsDigest{h.Namespace, ref.Digest}]; ok {
				if h.Frames == nil {
					h.Frames = map[driver.Digest][]byte{}
				}
				h.Frames[ref.Digest] = f
			}
		}
	}
	return hs, nil
}

// headQuery returns the SELECT of the heads matching q (headColumns, from
// helmstore_releases r), without ORDER BY, and its arguments.
func headQuery(q driver.Query) (string, []any) {
	var where []string
	var args []any
	add := func(cond string, v any) { where = append(where, cond); args = append(args, v) }
	if q.Namespace != "" {
		add("r.namespace = ?", q.Namespace)
	}
	if q.Key != "" {
		add("r.release_key = ?", q.Key)
	}
	if q.Name != "" {
		add("r.name = ?", q.Name)
	}
	if q.Status != "" {
		add("r.status = ?", q.Status)
	}
	if q.Version != nil {
		add("r.version = ?", *q.Version)
	}
	if q.CreatedAt != nil {
		add("r.created_at = ?", *q.CreatedAt)
	}
	if q.ModifiedAt != nil {
		add("r.modified_at = ?", *q.ModifiedAt)
	}
	keys := make([]string, 0, len(q.Labels))
	for k := range q.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	query := "SELECT " + selectHead + " FROM helmstore_releases r"
	if len(keys) > 0 {
		// One pass over the labels table whatever the number of labels: the
		// releases with a row for every (key, value) asked for. The primary
		// key (namespace, release_key, label_key) allows one row per label
		// key and release, and each condition names a different key, so a
		// release matches all n conditions exactly when it has n matching
		// rows. (One EXISTS per label made PostgreSQL plan and run a join
		// per label: minutes for a few hundred labels.)
		var sub []any
		var in string
		if q.Namespace != "" {
			in = "namespace = ? AND "
			sub = append(sub, q.Namespace)
		}
		conds := make([]string, len(keys))
		for i, k := range keys {
			conds[i] = "(label_key = ? AND label_value = ?)"
			sub = append(sub, k, q.Labels[k])
		}
		query += " JOIN (SELECT namespace, release_key FROM helmstore_labels WHERE " + in + orTree(conds) +
			" GROUP BY namespace, release_key HAVING COUNT(*) = " + strconv.Itoa(len(keys)) +
			") m ON m.namespace = r.namespace AND m.release_key = r.release_key"
		args = append(sub, args...)
	}
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	return query, args
}

// orTree joins conds with OR as a balanced tree, "((a OR b) OR (c OR d))":
// SQLite refuses an expression nested deeper than 1,000, which a flat chain
// of 1,000 ORs is.
func orTree(conds []string) string {
	if len(conds) == 1 {
		return conds[0]
	}
	m := len(conds) / 2
	return "(" + orTree(conds[:m]) + " OR " + orTree(conds[m:]) + ")"
}

func prefixed(p, cols string) string {
	parts := strings.Split(cols, ", ")
	for i := range parts {
		parts[i] = p + parts[i]
	}
	return strings.Join(parts, ", ")
}

// lockHead reads and locks the head stored under ns and key (its row of
// helmstore_releases: writers of a release lock it before its body).
func (b *backend) lockHead(ctx context.Context, tx *stdsql.Tx, ns, key string) (*driver.Head, error) {
	rows, err := b.query(ctx, tx, "SELECT "+selectHead+" FROM helmstore_releases r WHERE r.namespace = ? AND r.release_key = ?"+b.d.ForUpdate, ns, key)
	if err != nil {
		return nil, err
	}
	hs, err := scanHeads(rows)
	if err != nil {
		return nil, err
	}
	if len(hs) == 0 {
		return nil, driver.ErrReleaseNotFound
	}
	return hs[0], nil
}
