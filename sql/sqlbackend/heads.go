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
	"github.com/helmstore/helmstore/driver/backend"
)

// scanHeads reads head rows. A row whose labels or digests do not parse
// does not fail the whole read: its head carries Err (wrapping
// driver.ErrCorrupt and naming the release, as Head.SetDigestText does)
// with Namespace, Key and whatever else parsed, so one damaged release
// cannot hide the others.
func scanHeads(rows *stdsql.Rows) ([]*backend.Head, error) {
	defer rows.Close()
	var out []*backend.Head
	for rows.Next() {
		h := &backend.Head{}
		var labels []byte
		var t backend.DigestText
		if err := rows.Scan(&h.Namespace, &h.Key, &h.Name, &h.Version, &h.Status, &h.Owner, &h.CreatedAt, &h.ModifiedAt,
			&labels, &t.Chart, &t.Values, &t.Manifest, &t.ValuesBase, &t.ManifestBase, &h.Body); err != nil {
			return nil, err
		}
		var labelsErr error
		if err := json.Unmarshal(labels, &h.Labels); err != nil {
			h.Labels = nil
			labelsErr = fmt.Errorf("release %q in namespace %q: %w: labels: %v", h.Key, h.Namespace, driver.ErrCorrupt, err)
		}
		h.Err = errors.Join(labelsErr, h.SetDigestText(t))
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Heads returns the heads matching q in one query; custom labels are matched
// by the database through the indexed labels table.
func (b *Backend) Heads(ctx context.Context, q backend.Query) ([]*backend.Head, error) {
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
	query := "SELECT " + prefixed("r.", headColumns) + " FROM helmstore_releases r"
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
	query += " ORDER BY r.namespace, r.name, r.version"
	rows, err := b.query(ctx, b.db, query, args...)
	if err != nil {
		return nil, b.classify(err)
	}
	hs, err := scanHeads(rows)
	return hs, b.classify(err)
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

// lockHead reads and locks the head stored under ns and key.
func (b *Backend) lockHead(ctx context.Context, tx *stdsql.Tx, ns, key string) (*backend.Head, error) {
	rows, err := b.query(ctx, tx, "SELECT "+headColumns+" FROM helmstore_releases WHERE namespace = ? AND release_key = ?"+b.d.ForUpdate, ns, key)
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
