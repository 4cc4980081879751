package sqltest

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
)

// Tamper returns the conformance suite's Tamperer over the database of s, a
// store of any SQL dialect: it edits rows directly, as a hand edit or a bad
// restore would.
func Tamper(t *testing.T, s helm3.Store) drivertest.Tamperer {
	return tamperer{BackendOf(t, s)}
}

type tamperer struct{ b Backend }

func (tp tamperer) exec(ctx context.Context, q string, args ...any) (int64, error) {
	res, err := tp.b.DB().ExecContext(ctx, tp.b.Dialect().Rebind(q), args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

func (tp tamperer) Head(ctx context.Context, ns, key string) (drivertest.StoredHead, error) {
	var h drivertest.StoredHead
	err := tp.b.DB().QueryRowContext(ctx, tp.b.Dialect().Rebind("SELECT b.body, r.chart_digest, r.values_digest, r.manifest_digest FROM helmstore_releases r JOIN helmstore_bodies b ON b.namespace = r.namespace AND b.release_key = r.release_key WHERE r.namespace = ? AND r.release_key = ?"), ns, key).
		Scan(&h.Body, &h.Chart, &h.Values, &h.Manifest)
	return h, err
}

func (tp tamperer) SetHead(ctx context.Context, ns, key string, h drivertest.StoredHead) error {
	// Each table only where h differs from what it holds: MySQL counts
	// the rows a statement changed, not those it matched.
	old, err := tp.Head(ctx, ns, key)
	if err != nil {
		return err
	}
	if !bytes.Equal(old.Body, h.Body) {
		if err := tp.update(ctx, "UPDATE helmstore_bodies SET body = ? WHERE namespace = ? AND release_key = ?", h.Body, ns, key); err != nil {
			return err
		}
	}
	if old.Chart == h.Chart && old.Values == h.Values && old.Manifest == h.Manifest {
		return nil
	}
	return tp.update(ctx, "UPDATE helmstore_releases SET chart_digest = ?, values_digest = ?, manifest_digest = ? WHERE namespace = ? AND release_key = ?",
		h.Chart, h.Values, h.Manifest, ns, key)
}

func (tp tamperer) Part(ctx context.Context, ns, d string) ([]byte, error) {
	rows, err := tp.b.DB().QueryContext(ctx, tp.b.Dialect().Rebind("SELECT data FROM helmstore_part_chunks WHERE namespace = ? AND digest = ? ORDER BY seq"), ns, d)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var chunks [][]byte
	for rows.Next() {
		var c []byte
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		chunks = append(chunks, c)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return driver.JoinChunks(chunks, len(chunks), -1)
}

func (tp tamperer) SetPart(ctx context.Context, ns, d string, frame []byte) error {
	if _, err := tp.exec(ctx, "DELETE FROM helmstore_part_chunks WHERE namespace = ? AND digest = ?", ns, d); err != nil {
		return err
	}
	for seq, c := range driver.Chunks(frame, tp.b.Dialect().MaxChunk) {
		if _, err := tp.exec(ctx, "INSERT INTO helmstore_part_chunks (namespace, digest, seq, data) VALUES (?,?,?,?)", ns, d, seq, c); err != nil {
			return err
		}
	}
	return nil
}

func (tp tamperer) DeletePart(ctx context.Context, ns, d string) error {
	if _, err := tp.exec(ctx, "DELETE FROM helmstore_part_chunks WHERE namespace = ? AND digest = ?", ns, d); err != nil {
		return err
	}
	return tp.update(ctx, "DELETE FROM helmstore_parts WHERE namespace = ? AND digest = ?", ns, d)
}

func (tp tamperer) GarbleHead(ctx context.Context, ns, key string) error {
	return tp.update(ctx, "UPDATE helmstore_releases SET labels = ? WHERE namespace = ? AND release_key = ?", "{not json", ns, key)
}

// update runs a statement that must change exactly one row.
func (tp tamperer) update(ctx context.Context, q string, args ...any) error {
	n, err := tp.exec(ctx, q, args...)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%s: %d rows changed", q, n)
	}
	return nil
}
