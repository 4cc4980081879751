package sqlbackend

import (
	"context"
	stdsql "database/sql"
	"encoding/json"
	"sort"
	"strings"

	"github.com/helmstore/helmstore/driver"
)

func labelsJSON(h *driver.Head) (string, error) {
	if len(h.Labels) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(h.Labels)
	return string(b), err
}

func (b *backend) insertLabels(ctx context.Context, tx *stdsql.Tx, h *driver.Head) error {
	if len(h.Labels) == 0 {
		return nil
	}
	keys := make([]string, 0, len(h.Labels))
	for k := range h.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// In batches: 4 values a label, and SQLite allows 32766 in a statement.
	for len(keys) > 0 {
		batch := keys[:min(len(keys), labelBatch)]
		keys = keys[len(batch):]
		vals := make([]string, len(batch))
		args := make([]any, 0, 4*len(batch))
		for i, k := range batch {
			vals[i] = "(?,?,?,?)"
			args = append(args, h.Namespace, h.Key, k, h.Labels[k])
		}
		if _, err := b.exec(ctx, tx, "INSERT INTO helmstore_labels (namespace, release_key, label_key, label_value) VALUES "+strings.Join(vals, ","), args...); err != nil {
			return err
		}
	}
	return nil
}

// labelBatch is how many labels one INSERT writes.
const labelBatch = 500

// Create inserts the head with its summary (summaryValues), its body, its labels and
// a reference to each part, writing the bytes of parts the namespace does
// not hold yet, in one transaction.
// Every part h references must be in parts (driver.DiffParts): a part the
// namespace no longer holds (its last other head deleted meanwhile) must be
// written again with the head, and a reference to a part not given would go
// uncounted.
func (b *backend) Create(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	labels, err := labelsJSON(h)
	if err != nil {
		return err
	}
	add, _, err := driver.DiffParts(nil, h, parts)
	if err != nil {
		return err
	}
	t := h.DigestText()
	return b.tx(ctx, func(tx *stdsql.Tx) error {
		args := append([]any{h.Namespace, h.Key, h.Name, h.Version, h.Status, h.Owner, h.CreatedAt, h.ModifiedAt, labels,
			t.Chart, t.Values, t.Manifest, t.ValuesBase, t.ManifestBase}, summaryValues(h)...)
		_, err := b.exec(ctx, tx, "INSERT INTO helmstore_releases ("+releaseColumns+", "+summaryColumns+") VALUES ("+placeholders(len(args))+")", args...)
		if err != nil {
			if b.d.IsUnique(err) {
				return driver.ErrReleaseExists
			}
			return err
		}
		if err := b.putBody(ctx, tx, h); err != nil {
			return err
		}
		if err := b.insertLabels(ctx, tx, h); err != nil {
			return err
		}
		return b.refParts(ctx, tx, h.Namespace, add)
	})
}

// Update replaces the head, its summary and its body, its labels when they changed,
// and the references of parts that changed (driver.DiffParts against the
// locked old head), in one transaction. The UPDATE leaves created_at as stored.
func (b *backend) Update(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	labels, err := labelsJSON(h)
	if err != nil {
		return err
	}
	t := h.DigestText()
	return b.tx(ctx, func(tx *stdsql.Tx) error {
		old, err := b.lockHead(ctx, tx, h.Namespace, h.Key)
		if err != nil {
			return err
		}
		// An old head that does not verify counts as referencing nothing:
		// its digests may be another release's parts, whose references
		// it must not drop (a leak at worst, never a loss).
		add, drop, err := driver.DiffParts(old, h, parts)
		if err != nil {
			return err
		}
		args := append([]any{h.Name, h.Version, h.Status, h.Owner, h.ModifiedAt, labels, t.Chart, t.Values, t.Manifest, t.ValuesBase, t.ManifestBase},
			summaryValues(h)...)
		if _, err := b.exec(ctx, tx, `UPDATE helmstore_releases SET name = ?, version = ?, status = ?, owner = ?, modified_at = ?, labels = ?,
			chart_digest = ?, values_digest = ?, manifest_digest = ?, values_base = ?, manifest_base = ?,
			has_summary = ?, chart_name = ?, chart_version = ?, app_version = ?, updated = ?, description = ? WHERE namespace = ? AND release_key = ?`,
			append(args, h.Namespace, h.Key)...); err != nil {
			return err
		}
		if err := b.putBody(ctx, tx, h); err != nil {
			return err
		}
		if old.Err != nil || !driver.SameLabels(old.Labels, h.Labels) {
			if err := b.deleteLabels(ctx, tx, h.Namespace, h.Key); err != nil {
				return err
			}
			if err := b.insertLabels(ctx, tx, h); err != nil {
				return err
			}
		}
		return b.adjustRefs(ctx, tx, h.Namespace, add, drop, driver.Rewrites(h, add, parts))
	})
}

// Delete removes the head, its body and its labels and drops its part references,
// reading the frames the caller lacks first, in one transaction
// (driver.PlanDelete: a head that does not verify, unreadable or its seal
// broken, is removed with its labels only, since the parts its digests name
// may be another release's).
func (b *backend) Delete(ctx context.Context, ns, key string, have func(driver.Digest) bool) (*driver.Head, map[driver.Digest][]byte, error) {
	var h *driver.Head
	var frames map[driver.Digest][]byte
	err := b.tx(ctx, func(tx *stdsql.Tx) error {
		var err error
		if h, err = b.lockHead(ctx, tx, ns, key); err != nil {
			return err
		}
		read, drop := driver.PlanDelete(h, have)
		if frames, err = b.readParts(ctx, tx, read); err != nil {
			return err
		}
		for _, table := range []string{"helmstore_releases", "helmstore_bodies"} {
			if _, err := b.exec(ctx, tx, "DELETE FROM "+table+" WHERE namespace = ? AND release_key = ?", ns, key); err != nil {
				return err
			}
		}
		// A head that could not be read (Err) may have labels rows its
		// labels column does not show.
		if len(h.Labels) > 0 || h.Err != nil {
			if err := b.deleteLabels(ctx, tx, ns, key); err != nil {
				return err
			}
		}
		return b.adjustRefs(ctx, tx, ns, nil, drop, nil)
	})
	if err != nil {
		return nil, nil, err
	}
	return h, frames, nil
}

// deleteLabels deletes the labels rows of the release stored under ns and
// key.
func (b *backend) deleteLabels(ctx context.Context, tx *stdsql.Tx, ns, key string) error {
	_, err := b.exec(ctx, tx, "DELETE FROM helmstore_labels WHERE namespace = ? AND release_key = ?", ns, key)
	return err
}

// putBody stores h's body, replacing the row stored under its namespace
// and key if there is one: a body whose head was lost (damage, or a hand
// at the database) must not make the release's Create fail as a duplicate.
// The caller holds the head's row, inserted or locked.
func (b *backend) putBody(ctx context.Context, tx *stdsql.Tx, h *driver.Head) error {
	upsert := " ON DUPLICATE KEY UPDATE body = VALUES(body)"
	if b.d.Returning {
		upsert = " ON CONFLICT (namespace, release_key) DO UPDATE SET body = excluded.body"
	}
	_, err := b.exec(ctx, tx, "INSERT INTO helmstore_bodies (namespace, release_key, body) VALUES (?, ?, ?)"+upsert, h.Namespace, h.Key, h.Body)
	return err
}
