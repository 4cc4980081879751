package sqlbackend

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/helmstore/helmstore/driver"
)

// Parts reads the chunks of the referenced parts in one query (one per
// partReadBatch refs).
func (b *backend) Parts(ctx context.Context, refs []driver.PartRef) (map[driver.Digest][]byte, error) {
	frames, err := b.readParts(ctx, b.db, refs)
	return frames, b.classify(err)
}

// partReadBatch is the most refs one statement of readParts reads: each
// takes at most two of its variables, and SQLite allows 32,766 in a
// statement (PostgreSQL and MySQL 65,535). Listing 10,000 releases of 3
// revisions through Helm's interface reads some 60,000.
const partReadBatch = 10_000

func (b *backend) readParts(ctx context.Context, q querier, refs []driver.PartRef) (map[driver.Digest][]byte, error) {
	out := map[driver.Digest][]byte{}
	for len(refs) > 0 {
		n := min(len(refs), partReadBatch)
		if err := b.readPartBatch(ctx, q, refs[:n], out); err != nil {
			return nil, err
		}
		refs = refs[n:]
	}
	return out, nil
}

// readPartBatch reads the frames of refs into out, in one statement.
func (b *backend) readPartBatch(ctx context.Context, q querier, refs []driver.PartRef, out map[driver.Digest][]byte) error {
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
	rows, err := b.query(ctx, q, "SELECT namespace, digest, seq, data FROM helmstore_part_chunks WHERE "+strings.Join(conds, " OR "), args...) // chunkSet joins chunks in any order
	if err != nil {
		return err
	}
	defer rows.Close()
	chunks := chunkSet{}
	for rows.Next() {
		dest, vals := row(4)
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		chunks.scanned(vals[0], vals[1], vals[2], vals[3])
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for k, frame := range chunks.frames() {
		out[k.digest] = frame
	}
	return nil
}

// chunkSet gathers the chunk rows of part copies, in any order, and joins
// them into frames.
type chunkSet map[copyKey]*copyChunks

// copyKey names a part's copy: its namespace and digest text.
type copyKey struct{ ns, d string }

// copyChunks are the chunks read of one copy, by seq.
type copyChunks struct {
	bySeq map[int][]byte
	rows  int
}

// add records chunk seq of copy (ns, d).
func (s chunkSet) add(ns, d string, seq int, data []byte) {
	k := copyKey{ns, d}
	c := s[k]
	if c == nil {
		c = &copyChunks{bySeq: map[int][]byte{}}
		s[k] = c
	}
	c.rows++
	c.bySeq[seq] = data
}

// chunkCols name the values of a chunk row, for chunkSet.scanned.
var chunkCols = []string{"namespace", "digest", "seq", "data"}

// scanned records a chunk row as stored: one whose seq or data is NULL or
// of another type counts as a row of its copy but gives it no piece, so
// the copy does not join (JoinChunks) and the releases that use it read as
// corrupt, and every other part of the read still counts.
func (s chunkSet) scanned(ns, d, seq, data any) {
	c := values{cols: chunkCols}
	n, dg := c.text(0, ns), c.text(1, d)
	if c.err != nil {
		return // no copy to charge it to; the copies it was read for miss it
	}
	i, b := c.int(2, seq), c.bytes(3, data)
	if c.err != nil {
		s.add(n, dg, -1, nil)
		return
	}
	s.add(n, dg, i, b)
}

// pieces returns the chunks numbered 0, 1, ... up to the first gap: a copy
// stored whole has no gap, and fewer pieces than rows is what JoinChunks
// refuses.
func (c *copyChunks) pieces() [][]byte {
	var out [][]byte
	for seq := 0; ; seq++ {
		data, ok := c.bySeq[seq]
		if !ok {
			return out
		}
		out = append(out, data)
	}
}

// nsDigest is a part copy's namespace and parsed digest.
type nsDigest struct {
	ns     string
	digest driver.Digest
}

// frames returns the frames of the copies read. A copy whose chunks do not
// join (driver.JoinChunks: one missing, or numbered other than 0, 1, ...)
// or whose digest does not parse is left out: the engine reports the
// releases that use it as corrupt, and every other part of the read still
// counts.
func (s chunkSet) frames() map[nsDigest][]byte {
	out := make(map[nsDigest][]byte, len(s))
	for k, c := range s {
		d, err := driver.ParseDigest(k.d)
		if err != nil {
			continue
		}
		frame, err := driver.JoinChunks(c.pieces(), c.rows, -1)
		if err != nil {
			continue
		}
		out[nsDigest{k.ns, d}] = frame
	}
	return out
}

// refParts adds one reference to each part in ns, inserting the parts that
// are new and writing their chunks. The rows are written, and so locked,
// in digest order, the one global order of part locks (see adjustRefs):
// the database takes a multi-row INSERT's row locks in the order of its
// rows, and a Create's parts come in kind order (chart, values, manifest).
// It locks no other part's row (TestWritesLockOnlyTheirParts).
func (b *backend) refParts(ctx context.Context, tx *stdsql.Tx, ns string, parts []*driver.Part) error {
	if len(parts) == 0 {
		return nil
	}
	parts = slices.Clone(parts)
	slices.SortFunc(parts, func(x, y *driver.Part) int { return strings.Compare(x.Digest.String(), y.Digest.String()) })
	var vals []string
	var args []any
	for _, p := range parts {
		vals = append(vals, "(?,?,?,?,1)")
		args = append(args, ns, p.Digest.String(), p.Kind.String(), p.Size)
	}
	insert := "INSERT INTO helmstore_parts (namespace, digest, kind, raw_size, refs) VALUES " + strings.Join(vals, ",")
	var rows *stdsql.Rows
	var err error
	if b.d.Returning {
		rows, err = b.query(ctx, tx, insert+" ON CONFLICT (namespace, digest) DO UPDATE SET refs = helmstore_parts.refs + 1 RETURNING digest, refs", args...)
	} else {
		// MySQL has no RETURNING: upsert, then read the counts back: our
		// own writes, under the row locks the upsert took, so a plain
		// read sees them. Not FOR UPDATE: MariaDB may run that as a scan
		// of the namespace's part rows, locking (and waiting for) parts
		// between ours while holding ours, which deadlocked with an
		// Update locking those parts in order.
		if _, err := b.exec(ctx, tx, insert+" ON DUPLICATE KEY UPDATE refs = refs + 1", args...); err != nil {
			return err
		}
		ds := []any{ns}
		for _, p := range parts {
			ds = append(ds, p.Digest.String())
		}
		rows, err = b.query(ctx, tx, "SELECT digest, refs FROM helmstore_parts WHERE namespace = ? AND digest IN ("+placeholders(len(parts))+")", ds...)
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
		heal := n < 0 || p.Rewrite // its references unknown, or its bytes found damaged
		if n == 1 && !heal {       // new in this namespace: write its bytes
			fresh, err := b.writeNewChunks(ctx, tx, ns, p)
			if err != nil {
				return err
			}
			heal = !fresh // its row was lost, its chunks were not: used by other heads?
		}
		if heal {
			if err := b.heal(ctx, tx, ns, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// heal writes the bytes of p over the stored copy in ns (damaged, or
// whose references are not known) and counts its references again: the
// heads of ns that reference it, the one this write stored included. Its
// row (written, or locked by refParts' upsert) is locked first, then its
// chunks are replaced.
func (b *backend) heal(ctx context.Context, tx *stdsql.Tx, ns string, p *driver.Part) error {
	upsert := " ON DUPLICATE KEY UPDATE kind = VALUES(kind), raw_size = VALUES(raw_size)"
	if b.d.Returning {
		upsert = " ON CONFLICT (namespace, digest) DO UPDATE SET kind = excluded.kind, raw_size = excluded.raw_size"
	}
	d := p.Digest.String()
	if _, err := b.exec(ctx, tx, "INSERT INTO helmstore_parts (namespace, digest, kind, raw_size, refs) VALUES (?,?,?,?,1)"+upsert,
		ns, d, p.Kind.String(), p.Size); err != nil {
		return err
	}
	if _, err := b.exec(ctx, tx, `UPDATE helmstore_parts SET refs = (SELECT COUNT(*) FROM helmstore_releases
		WHERE namespace = ? AND ? IN (chart_digest, values_digest, manifest_digest, values_base, manifest_base))
		WHERE namespace = ? AND digest = ?`, ns, d, ns, d); err != nil {
		return err
	}
	if _, err := b.exec(ctx, tx, "DELETE FROM helmstore_part_chunks WHERE namespace = ? AND digest = ?", ns, d); err != nil {
		return err
	}
	return b.writeChunks(ctx, tx, ns, p)
}

// scanRefs reads (digest, refs) rows. A count that is NULL or not an
// integer reads as -1: not known, so the write that reads it cannot tell
// whether the part's bytes are stored, nor what the count should be
// (heal).
func scanRefs(rows *stdsql.Rows) (map[string]int, error) {
	defer rows.Close()
	refs := map[string]int{}
	for rows.Next() {
		dest, vals := row(2)
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		c := values{cols: []string{"digest", "refs"}}
		d := c.text(0, vals[0])
		if c.err != nil {
			return nil, fmt.Errorf("%w: part %s in helmstore_parts: %v", driver.ErrCorrupt, d, c.err)
		}
		if refs[d] = c.int(1, vals[1]); c.err != nil {
			refs[d] = -1
		}
	}
	return refs, rows.Err()
}

// writeNewChunks writes the chunks of p, a part new to ns, and reports
// whether they all were new: false if one was there already (the part's
// row was lost and its chunks were not), which it leaves as it was. It
// costs what writeChunks does.
func (b *backend) writeNewChunks(ctx context.Context, tx *stdsql.Tx, ns string, p *driver.Part) (bool, error) {
	ignore := " ON DUPLICATE KEY UPDATE seq = seq" // 0 rows affected
	if b.d.Returning {
		ignore = " ON CONFLICT DO NOTHING"
	}
	for seq, c := range driver.Chunks(p.Frame(), b.d.MaxChunk) {
		res, err := b.exec(ctx, tx, "INSERT INTO helmstore_part_chunks (namespace, digest, seq, data) VALUES (?,?,?,?)"+ignore,
			ns, p.Digest.String(), seq, c)
		if err != nil {
			return false, err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return false, err
		}
	}
	return true, nil
}

// writeChunks writes the chunks of p in ns, where it has none.
func (b *backend) writeChunks(ctx context.Context, tx *stdsql.Tx, ns string, p *driver.Part) error {
	for seq, c := range driver.Chunks(p.Frame(), b.d.MaxChunk) {
		if _, err := b.exec(ctx, tx, "INSERT INTO helmstore_part_chunks (namespace, digest, seq, data) VALUES (?,?,?,?)",
			ns, p.Digest.String(), seq, c); err != nil {
			return err
		}
	}
	return nil
}

// adjustRefs adds a reference to each part in add, drops one from each
// part in drop and heals each part in rewrite (driver.Rewrites), in one
// pass in digest order: every writer locks the part rows it changes in the
// same global order (after its one head), so concurrent writers sharing
// parts wait for each other but never deadlock. A part new to ns gets its
// chunks written; a part left with no reference is deleted with its
// chunks. add, drop and rewrite are disjoint (driver.DiffParts,
// driver.PlanDelete, driver.Rewrites).
func (b *backend) adjustRefs(ctx context.Context, tx *stdsql.Tx, ns string, add []*driver.Part, drop []driver.PartRef, rewrite []*driver.Part) error {
	type change struct {
		d       string
		part    *driver.Part // nil: drop a reference
		rewrite bool         // heal part, its references unchanged
	}
	changes := make([]*change, 0, len(add)+len(drop)+len(rewrite))
	for _, r := range drop {
		changes = append(changes, &change{d: r.Digest.String()})
	}
	for _, p := range add {
		changes = append(changes, &change{d: p.Digest.String(), part: p})
	}
	for _, p := range rewrite {
		changes = append(changes, &change{d: p.Digest.String(), part: p, rewrite: true})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].d < changes[j].d })
	var dead []any
	for _, c := range changes {
		if c.rewrite {
			if err := b.heal(ctx, tx, ns, c.part); err != nil {
				return err
			}
			continue
		}
		if c.part != nil {
			if err := b.refParts(ctx, tx, ns, []*driver.Part{c.part}); err != nil {
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
func (b *backend) unref(ctx context.Context, tx *stdsql.Tx, ns, d string) (refs int, ok bool, err error) {
	const upd = "UPDATE helmstore_parts SET refs = refs - 1 WHERE namespace = ? AND digest = ?"
	var rows *stdsql.Rows
	if b.d.Returning {
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
		var v any
		if err := rows.Scan(&v); err != nil {
			return 0, false, err
		}
		c := values{cols: []string{"refs"}}
		if refs, ok = c.int(0, v), true; c.err != nil {
			// A count that is NULL or not a number: the part may still
			// be used, so it is kept (a leak at worst, never a loss).
			refs = 1
		}
	}
	return refs, ok, rows.Err()
}
