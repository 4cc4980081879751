package sql

import (
	"context"
	stdsql "database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/pressly/goose/v3"
)

//go:embed migrations
var migrationsFS embed.FS

// versionTable is where goose records the applied schema version.
const versionTable = "helmstore_schema_version"

// migrate brings the schema up to date under the dialect's cross-process
// lock, so two processes opening a fresh database at once cannot both apply
// the same migration.
func migrate(ctx context.Context, db *stdsql.DB, d *dialect) error {
	fsys, err := fs.Sub(migrationsFS, "migrations/"+d.name)
	if err != nil {
		return err
	}
	opts := []goose.ProviderOption{goose.WithTableName(versionTable), goose.WithDisableGlobalRegistry(true)}
	lockOpt, unlock, err := d.lockMigrations(ctx, db)
	if err != nil {
		return fmt.Errorf("migration lock: %w", err)
	}
	defer unlock()
	if lockOpt != nil {
		opts = append(opts, lockOpt)
	}
	p, err := goose.NewProvider(d.goose, db, fsys, opts...)
	if err != nil {
		return fmt.Errorf("migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate schema: %w", err)
	}
	return nil
}
