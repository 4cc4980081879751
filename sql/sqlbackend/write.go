package sqlbackend

import (
	"context"
	stdsql "database/sql"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
)

func labelsJSON(h *backend.Head) (string, error) {
	if len(h.Labels) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(h.Labels)
	return string(b), err
}

func (b *Backend) insertLabels(ctx context.Context, tx *stdsql.Tx, h *backend.Head) error {
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

// Create inserts the head, its labels and a reference to each part, writing
// the bytes of parts the namespace does not hold yet, in one transaction.
func (b *Backend) Create(ctx context.Context, h *backend.Head, parts []*codec.Part) error {
	labels, err := labelsJSON(h)
	if err != nil {
		return err
	}
	if err := checkGiven(h, parts); err != nil {
		return err
	}
	return b.tx(ctx, func(tx *stdsql.Tx) error {
		_, err := b.exec(ctx, tx, "INSERT INTO helmstore_releases ("+headColumns+") VALUES ("+placeholders(15)+")",
			h.Namespace, h.Key, h.Name, h.Version, h.Status, h.Owner, h.CreatedAt, h.ModifiedAt, labels,
			h.Chart.String(), h.Values.String(), h.Manifest.String(), h.ValuesBase.String(), h.ManifestBase.String(), h.Body)
		if err != nil {
			if b.d.IsUnique(err) {
				return driver.ErrReleaseExists
			}
			return err
		}
		if err := b.insertLabels(ctx, tx, h); err != nil {
			return err
		}
		return b.refParts(ctx, tx, h.Namespace, h.Referenced(parts))
	})
}

// checkGiven refuses a Create that does not supply every part h references
// (a delta's base included; Update checks the parts it adds): a part the namespace no longer holds (its
// last other head deleted meanwhile) must be written again with the head,
// and a reference to a part not given would go uncounted.
func checkGiven(h *backend.Head, parts []*codec.Part) error {
	have := map[codec.Digest]bool{}
	for _, p := range parts {
		have[p.Digest] = true
	}
	var missing []string
	for _, r := range h.Parts() {
		if !have[r.Digest] {
			missing = append(missing, r.Kind.String()+" "+r.Digest.Short())
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("parts %v of the release were not given to the backend", missing)
	}
	return nil
}

// Update replaces the head, its labels when they changed, and the references
// of parts that changed, in one transaction.
func (b *Backend) Update(ctx context.Context, h *backend.Head, parts []*codec.Part) error {
	labels, err := labelsJSON(h)
	if err != nil {
		return err
	}
	return b.tx(ctx, func(tx *stdsql.Tx) error {
		old, err := b.lockHead(ctx, tx, h.Namespace, h.Key)
		if err != nil {
			return err
		}
		if _, err := b.exec(ctx, tx, `UPDATE helmstore_releases SET name = ?, version = ?, status = ?, owner = ?, modified_at = ?, labels = ?,
			chart_digest = ?, values_digest = ?, manifest_digest = ?, values_base = ?, manifest_base = ?, body = ? WHERE namespace = ? AND release_key = ?`,
			h.Name, h.Version, h.Status, h.Owner, h.ModifiedAt, labels, h.Chart.String(), h.Values.String(), h.Manifest.String(),
			h.ValuesBase.String(), h.ManifestBase.String(), h.Body,
			h.Namespace, h.Key); err != nil {
			return err
		}
		if old.Err != nil || !backend.SameLabels(old.Labels, h.Labels) {
			if _, err := b.exec(ctx, tx, "DELETE FROM helmstore_labels WHERE namespace = ? AND release_key = ?", h.Namespace, h.Key); err != nil {
				return err
			}
			if err := b.insertLabels(ctx, tx, h); err != nil {
				return err
			}
		}
		added, removed := diffParts(old, h)
		var add []*codec.Part
		for _, p := range h.Referenced(parts) {
			if added[p.Digest] {
				add = append(add, p)
			}
		}
		if len(add) != len(added) {
			// A reference not counted would let the part go while h
			// uses it (checkGiven, for the parts h adds).
			return fmt.Errorf("parts the release newly references were not given to the backend (%d of %d given)", len(add), len(added))
		}
		return b.adjustRefs(ctx, tx, h.Namespace, add, removed)
	})
}

// diffParts returns the digests h references that old does not, and those
// old references that h does not.
func diffParts(old, h *backend.Head) (added map[codec.Digest]bool, removed []codec.Digest) {
	was := map[codec.Digest]bool{}
	for _, r := range old.Parts() {
		was[r.Digest] = true
	}
	now := map[codec.Digest]bool{}
	added = map[codec.Digest]bool{}
	for _, r := range h.Parts() {
		now[r.Digest] = true
		if !was[r.Digest] {
			added[r.Digest] = true
		}
	}
	for d := range was {
		if !now[d] {
			removed = append(removed, d)
		}
	}
	return added, removed
}

// Delete removes the head and its labels and drops its part references,
// reading the parts the caller lacks first, in one transaction. A head that
// does not verify (unreadable, or its seal broken) is removed with its labels
// only: the parts its digests name may be another release's.
func (b *Backend) Delete(ctx context.Context, ns, key string, have func(codec.Digest) bool) (*backend.Head, map[codec.Digest][]byte, error) {
	var h *backend.Head
	var frames map[codec.Digest][]byte
	err := b.tx(ctx, func(tx *stdsql.Tx) error {
		var err error
		if h, err = b.lockHead(ctx, tx, ns, key); err != nil {
			return err
		}
		if h.Verify() != nil {
			// Its digests may be another release's parts: remove the head
			// and its labels only, leaving every part reference as it is.
			frames = nil
			return b.removeHead(ctx, tx, ns, key)
		}
		var want []backend.PartRef
		var all []codec.Digest
		for _, r := range h.Parts() {
			all = append(all, r.Digest)
			if !have(r.Digest) {
				want = append(want, r)
			}
		}
		if frames, err = b.readParts(ctx, tx, want); err != nil {
			return err
		}
		if _, err := b.exec(ctx, tx, "DELETE FROM helmstore_releases WHERE namespace = ? AND release_key = ?", ns, key); err != nil {
			return err
		}
		// A head that could not be read (Err) may have labels rows its
		// labels column does not show.
		if len(h.Labels) > 0 || h.Err != nil {
			if _, err := b.exec(ctx, tx, "DELETE FROM helmstore_labels WHERE namespace = ? AND release_key = ?", ns, key); err != nil {
				return err
			}
		}
		return b.adjustRefs(ctx, tx, ns, nil, all)
	})
	if err != nil {
		return nil, nil, err
	}
	return h, frames, nil
}

// removeHead deletes the head and labels stored under ns and key.
func (b *Backend) removeHead(ctx context.Context, tx *stdsql.Tx, ns, key string) error {
	if _, err := b.exec(ctx, tx, "DELETE FROM helmstore_releases WHERE namespace = ? AND release_key = ?", ns, key); err != nil {
		return err
	}
	_, err := b.exec(ctx, tx, "DELETE FROM helmstore_labels WHERE namespace = ? AND release_key = ?", ns, key)
	return err
}
