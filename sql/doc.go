// Package sql stores Helm releases in SQL databases: one engine, thin
// dialects. Importing it registers three HELM_DRIVER names:
//
//   - "postgres": PostgreSQL through github.com/jackc/pgx/v5. The connection
//     string is a postgres:// URL or a key=value DSN, as pgx accepts.
//   - "sqlite": SQLite through modernc.org/sqlite (pure Go, no cgo): a file
//     path or file: URI. The embedded default: no server needed.
//   - "mysql": MySQL and MariaDB through github.com/go-sql-driver/mysql.
//
// A release is one row in helmstore_releases (its head), its custom labels
// are rows in helmstore_labels (indexed, so Query runs in the database), and
// its chart, values and manifest are content-addressed rows in helmstore_parts
// with their bytes in helmstore_part_chunks, stored once per namespace and
// reference-counted. Create, Update and Delete are each one transaction. The
// schema is versioned and migrated on Open with pressly/goose, under a lock
// so that two processes opening at once are safe.
package sql
