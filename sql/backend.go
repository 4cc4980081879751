package sql

import (
	"context"
	stdsql "database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
)

// backend is backend.Backend over a database/sql pool and a dialect.
type sqlBackend struct {
	db *stdsql.DB
	d  *dialect
	// retries bounds how often a transaction that hit a deadlock, a
	// serialization failure or a lock timeout is run again.
	retries int
	// beforeCommit, when set (by tests), runs inside every write
	// transaction just before it commits.
	beforeCommit func(ctx context.Context, tx *stdsql.Tx, attempt int) error
	// deadlocks counts the deadlocks the database reported to write
	// transactions (retried or not), for tests: writers take their locks
	// in one order, so there should be none.
	deadlocks atomic.Int64
}

var _ backend.Backend = (*sqlBackend)(nil)

const headColumns = `namespace, release_key, name, version, status, owner, created_at, modified_at, labels, chart_digest, values_digest, manifest_digest, values_base, manifest_base, body`

func (b *sqlBackend) Close() error { return b.db.Close() }

// tx runs fn in a transaction, again (with backoff) when the dialect calls
// the failure retryable. Any other error, and fn's own, is returned as is.
func (b *sqlBackend) tx(ctx context.Context, fn func(tx *stdsql.Tx) error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = b.tryTx(ctx, attempt, fn)
		if err != nil && isDeadlock(err) {
			b.deadlocks.Add(1)
		}
		if err == nil || !b.d.isRetryable(err) || attempt >= b.retries {
			return err
		}
		backoff := time.Duration(5<<min(attempt, 6)) * time.Millisecond
		backoff += time.Duration(rand.Int64N(int64(backoff)))
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(backoff):
		}
	}
}

func (b *sqlBackend) tryTx(ctx context.Context, attempt int, fn func(tx *stdsql.Tx) error) error {
	tx, err := b.db.BeginTx(ctx, b.d.writeTx())
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if b.beforeCommit != nil {
		if err := b.beforeCommit(ctx, tx, attempt); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	return tx.Commit()
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*stdsql.Rows, error)
	ExecContext(ctx context.Context, query string, args ...any) (stdsql.Result, error)
}

func (b *sqlBackend) exec(ctx context.Context, q querier, query string, args ...any) (stdsql.Result, error) {
	return q.ExecContext(ctx, b.d.rebind(query), args...)
}

func (b *sqlBackend) query(ctx context.Context, q querier, query string, args ...any) (*stdsql.Rows, error) {
	return q.QueryContext(ctx, b.d.rebind(query), args...)
}

// placeholders returns "?,?,?" for n values.
func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// scanHeads reads head rows. A row whose labels or digests do not parse
// does not fail the whole read: its head carries Err (wrapping
// codec.ErrCorrupt and naming the release) with Namespace, Key and whatever
// else parsed, so one damaged release cannot hide the others.
func scanHeads(rows *stdsql.Rows) ([]*backend.Head, error) {
	defer rows.Close()
	var out []*backend.Head
	for rows.Next() {
		h := &backend.Head{}
		var labels []byte
		var chart, values, manifest, valuesBase, manifestBase string
		if err := rows.Scan(&h.Namespace, &h.Key, &h.Name, &h.Version, &h.Status, &h.Owner, &h.CreatedAt, &h.ModifiedAt,
			&labels, &chart, &values, &manifest, &valuesBase, &manifestBase, &h.Body); err != nil {
			return nil, err
		}
		var problems []string
		if err := json.Unmarshal(labels, &h.Labels); err != nil {
			h.Labels = nil
			problems = append(problems, fmt.Sprintf("labels: %v", err))
		}
		for _, p := range []struct {
			kind string
			s    string
			d    *codec.Digest
		}{{"chart", chart, &h.Chart}, {"values", values, &h.Values}, {"manifest", manifest, &h.Manifest},
			{"values base", valuesBase, &h.ValuesBase}, {"manifest base", manifestBase, &h.ManifestBase}} {
			d, err := codec.ParseDigest(p.s)
			if err != nil {
				problems = append(problems, fmt.Sprintf("%s digest: %v", p.kind, err))
				continue
			}
			*p.d = d
		}
		if len(problems) > 0 {
			h.Err = fmt.Errorf("release %q in namespace %q: %w: %s", h.Key, h.Namespace, codec.ErrCorrupt, strings.Join(problems, "; "))
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Heads returns the heads matching q in one query; custom labels are matched
// by the database through the indexed labels table.
func (b *sqlBackend) Heads(ctx context.Context, q backend.Query) ([]*backend.Head, error) {
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
		return nil, err
	}
	return scanHeads(rows)
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

// Parts reads the chunks of the referenced parts in one query.
func (b *sqlBackend) Parts(ctx context.Context, refs []backend.PartRef) (map[codec.Digest][]byte, error) {
	return b.readParts(ctx, b.db, refs)
}

func (b *sqlBackend) readParts(ctx context.Context, q querier, refs []backend.PartRef) (map[codec.Digest][]byte, error) {
	if len(refs) == 0 {
		return map[codec.Digest][]byte{}, nil
	}
	byNS := map[string][]string{}
	var nss []string
	for _, r := range refs {
		if _, ok := byNS[r.Namespace]; !ok {
			nss = append(nss, r.Namespace)
		}
		byNS[r.Namespace] = append(byNS[r.Namespace], r.Digest.String())
	}
	var conds []string
	var args []any
	for _, ns := range nss {
		conds = append(conds, "(namespace = ? AND digest IN ("+placeholders(len(byNS[ns]))+"))")
		args = append(args, ns)
		for _, d := range byNS[ns] {
			args = append(args, d)
		}
	}
	rows, err := b.query(ctx, q, "SELECT namespace, digest, seq, data FROM helmstore_part_chunks WHERE "+strings.Join(conds, " OR ")+" ORDER BY namespace, digest, seq", args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	// A copy whose chunks are not numbered 0, 1, ... or whose digest does
	// not parse is left out: the engine reports the releases that use it as
	// corrupt, and every other part of the read still counts.
	type copyKey struct{ ns, d string }
	chunks := map[copyKey][][]byte{}
	broken := map[copyKey]bool{}
	for rows.Next() {
		var k copyKey
		var seq int
		var data []byte
		if err := rows.Scan(&k.ns, &k.d, &seq, &data); err != nil {
			return nil, err
		}
		if seq != len(chunks[k]) {
			broken[k] = true
		}
		chunks[k] = append(chunks[k], data)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make(map[codec.Digest][]byte, len(chunks))
	for k, cs := range chunks {
		d, err := codec.ParseDigest(k.d)
		if err != nil || broken[k] {
			continue
		}
		out[d] = codec.Join(cs)
	}
	return out, nil
}

func labelsJSON(h *backend.Head) (string, error) {
	if len(h.Labels) == 0 {
		return "{}", nil
	}
	b, err := json.Marshal(h.Labels)
	return string(b), err
}

func (b *sqlBackend) insertLabels(ctx context.Context, tx *stdsql.Tx, h *backend.Head) error {
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
func (b *sqlBackend) Create(ctx context.Context, h *backend.Head, parts []*codec.Part) error {
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
			if b.d.isUnique(err) {
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

// refParts adds one reference to each part in ns, inserting the parts that
// are new and writing their chunks.
func (b *sqlBackend) refParts(ctx context.Context, tx *stdsql.Tx, ns string, parts []*codec.Part) error {
	if len(parts) == 0 {
		return nil
	}
	var vals []string
	var args []any
	for _, p := range parts {
		vals = append(vals, "(?,?,?,?,1)")
		args = append(args, ns, p.Digest.String(), p.Kind.String(), p.Size)
	}
	insert := "INSERT INTO helmstore_parts (namespace, digest, kind, raw_size, refs) VALUES " + strings.Join(vals, ",")
	var rows *stdsql.Rows
	var err error
	if b.d.returning {
		rows, err = b.query(ctx, tx, insert+" ON CONFLICT (namespace, digest) DO UPDATE SET refs = helmstore_parts.refs + 1 RETURNING digest, refs", args...)
	} else {
		// MySQL has no RETURNING: upsert, then read the counts back (our
		// own writes, under the row locks the upsert took).
		if _, err := b.exec(ctx, tx, insert+" ON DUPLICATE KEY UPDATE refs = refs + 1", args...); err != nil {
			return err
		}
		ds := []any{ns}
		for _, p := range parts {
			ds = append(ds, p.Digest.String())
		}
		rows, err = b.query(ctx, tx, "SELECT digest, refs FROM helmstore_parts WHERE namespace = ? AND digest IN ("+placeholders(len(parts))+") FOR UPDATE", ds...)
	}
	if err != nil {
		return err
	}
	refs, err := scanRefs(rows)
	if err != nil {
		return err
	}
	for _, p := range parts {
		n, ok := refs[p.Digest.String()]
		if !ok {
			return fmt.Errorf("part %s was not recorded", p.Digest.Short())
		}
		if n == 1 { // new in this namespace: write its bytes
			if err := b.writeChunks(ctx, tx, ns, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// scanRefs reads (digest, refs) rows.
func scanRefs(rows *stdsql.Rows) (map[string]int, error) {
	defer rows.Close()
	refs := map[string]int{}
	for rows.Next() {
		var d string
		var n int
		if err := rows.Scan(&d, &n); err != nil {
			return nil, err
		}
		refs[d] = n
	}
	return refs, rows.Err()
}

func (b *sqlBackend) writeChunks(ctx context.Context, tx *stdsql.Tx, ns string, p *codec.Part) error {
	for seq, c := range codec.Chunks(p.Frame(), b.d.maxChunk) {
		if _, err := b.exec(ctx, tx, "INSERT INTO helmstore_part_chunks (namespace, digest, seq, data) VALUES (?,?,?,?)",
			ns, p.Digest.String(), seq, c); err != nil {
			return err
		}
	}
	return nil
}

// adjustRefs adds a reference to each part in add and drops one from each
// digest in remove, in one pass in digest order: every writer locks the part
// rows it changes in the same global order (after its one head), so
// concurrent writers sharing parts wait for each other but never deadlock.
// A part new to ns gets its chunks written; a part left with no reference
// is deleted with its chunks. add and remove are disjoint (diffParts).
func (b *sqlBackend) adjustRefs(ctx context.Context, tx *stdsql.Tx, ns string, add []*codec.Part, remove []codec.Digest) error {
	type change struct {
		d    string
		part *codec.Part // nil: drop a reference
	}
	byDigest := map[string]*change{}
	for _, d := range remove {
		if !d.IsZero() {
			byDigest[d.String()] = &change{d: d.String()}
		}
	}
	for _, p := range add {
		byDigest[p.Digest.String()] = &change{d: p.Digest.String(), part: p}
	}
	changes := make([]*change, 0, len(byDigest))
	for _, c := range byDigest {
		changes = append(changes, c)
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].d < changes[j].d })
	var dead []any
	for _, c := range changes {
		if c.part != nil {
			if err := b.refParts(ctx, tx, ns, []*codec.Part{c.part}); err != nil {
				return err
			}
			continue
		}
		n, ok, err := b.unref(ctx, tx, ns, c.d)
		if err != nil {
			return err
		}
		if ok && n <= 0 {
			dead = append(dead, c.d)
		}
	}
	if len(dead) == 0 {
		return nil
	}
	// The dead parts are locked by this transaction (their rows, at refs
	// 0): deleting them last keeps the lock order.
	dargs := append([]any{ns}, dead...)
	din := "namespace = ? AND digest IN (" + placeholders(len(dead)) + ")"
	if _, err := b.exec(ctx, tx, "DELETE FROM helmstore_part_chunks WHERE "+din, dargs...); err != nil {
		return err
	}
	_, err := b.exec(ctx, tx, "DELETE FROM helmstore_parts WHERE "+din, dargs...)
	return err
}

// unref drops one reference from part d in ns, returning the references
// left; ok is false if ns holds no such part.
func (b *sqlBackend) unref(ctx context.Context, tx *stdsql.Tx, ns, d string) (refs int, ok bool, err error) {
	const upd = "UPDATE helmstore_parts SET refs = refs - 1 WHERE namespace = ? AND digest = ?"
	var rows *stdsql.Rows
	if b.d.returning {
		rows, err = b.query(ctx, tx, upd+" RETURNING refs", ns, d)
	} else {
		// The UPDATE locked the row: read our own write back.
		if _, err = b.exec(ctx, tx, upd, ns, d); err != nil {
			return 0, false, err
		}
		rows, err = b.query(ctx, tx, "SELECT refs FROM helmstore_parts WHERE namespace = ? AND digest = ?", ns, d)
	}
	if err != nil {
		return 0, false, err
	}
	defer rows.Close()
	if rows.Next() {
		if err := rows.Scan(&refs); err != nil {
			return 0, false, err
		}
		ok = true
	}
	return refs, ok, rows.Err()
}

// lockHead reads and locks the head stored under ns and key.
func (b *sqlBackend) lockHead(ctx context.Context, tx *stdsql.Tx, ns, key string) (*backend.Head, error) {
	rows, err := b.query(ctx, tx, "SELECT "+headColumns+" FROM helmstore_releases WHERE namespace = ? AND release_key = ?"+b.d.forUpdate, ns, key)
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

// Update replaces the head, its labels when they changed, and the references
// of parts that changed, in one transaction.
func (b *sqlBackend) Update(ctx context.Context, h *backend.Head, parts []*codec.Part) error {
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
		if old.Err != nil || !sameLabels(old.Labels, h.Labels) {
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
			return fmt.Errorf("parts the release newly references were not given to the sqlBackend (%d of %d given)", len(add), len(added))
		}
		return b.adjustRefs(ctx, tx, h.Namespace, add, removed)
	})
}

func sameLabels(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
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
func (b *sqlBackend) Delete(ctx context.Context, ns, key string, have func(codec.Digest) bool) (*backend.Head, map[codec.Digest][]byte, error) {
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
func (b *sqlBackend) removeHead(ctx context.Context, tx *stdsql.Tx, ns, key string) error {
	if _, err := b.exec(ctx, tx, "DELETE FROM helmstore_releases WHERE namespace = ? AND release_key = ?", ns, key); err != nil {
		return err
	}
	_, err := b.exec(ctx, tx, "DELETE FROM helmstore_labels WHERE namespace = ? AND release_key = ?", ns, key)
	return err
}

// Stats counts heads and parts, and sums their stored sizes.
func (b *sqlBackend) Stats(ctx context.Context, ns string) (driver.Stats, error) {
	s := driver.Stats{Parts: map[string]int{}}
	where, args := "", []any{}
	if ns != "" {
		where, args = " WHERE namespace = ?", []any{ns}
	}
	row := b.db.QueryRowContext(ctx, b.d.rebind("SELECT COUNT(*), COALESCE(SUM(LENGTH(body) + LENGTH(labels)), 0) FROM helmstore_releases"+where), args...)
	if err := row.Scan(&s.Releases, &s.HeadBytes); err != nil {
		return s, err
	}
	var labelBytes int64
	if err := b.db.QueryRowContext(ctx, b.d.rebind("SELECT COALESCE(SUM(LENGTH(label_key) + LENGTH(label_value)), 0) FROM helmstore_labels"+where), args...).Scan(&labelBytes); err != nil {
		return s, err
	}
	s.HeadBytes += labelBytes
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
	err = b.db.QueryRowContext(ctx, b.d.rebind("SELECT COALESCE(SUM(LENGTH(data)), 0) FROM helmstore_part_chunks"+where), args...).Scan(&s.PartBytes)
	return s, err
}
