package sqlbackend

import (
	"context"
	stdsql "database/sql"
	"errors"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

// versionTable is where goose records the applied schema version.
const versionTable = "helmstore_schema_version"

// migrate brings the schema up to date under the dialect's cross-process
// lock, so two processes opening a fresh database at once cannot both apply
// the same migration.
func migrate(ctx context.Context, db *stdsql.DB, d *Dialect) error {
	if d.Migrations == nil {
		return errors.New("the dialect has no migrations")
	}
	fsys, err := fs.Sub(d.Migrations, "migrations")
	if err != nil {
		return err
	}
	opts := []goose.ProviderOption{goose.WithTableName(versionTable), goose.WithDisableGlobalRegistry(true)}
	unlock := func() {}
	if d.LockMigrations != nil {
		lockOpt, u, err := d.LockMigrations(ctx, db)
		if err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		if u != nil {
			unlock = u
		}
		if lockOpt != nil {
			opts = append(opts, lockOpt)
		}
	}
	defer unlock()
	p, err := goose.NewProvider(d.Goose, db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate schema: %w", err)
	}
	return nil
}
