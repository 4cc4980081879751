package sql

import (
	"context"
	stdsql "database/sql"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
)

var _ engine.HeadRemover = (*backend)(nil)

// RemoveHead removes a head and its labels, leaving part references as they
// are: the engine calls it for a head that does not verify, whose digests
// cannot be trusted.
func (b *backend) RemoveHead(ctx context.Context, ns, key string) error {
	return b.tx(ctx, func(tx *stdsql.Tx) error {
		res, err := b.exec(ctx, tx, "DELETE FROM helmstore_releases WHERE namespace = ? AND release_key = ?", ns, key)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return driver.ErrReleaseNotFound
		}
		_, err = b.exec(ctx, tx, "DELETE FROM helmstore_labels WHERE namespace = ? AND release_key = ?", ns, key)
		return err
	})
}
