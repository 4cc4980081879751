package sqltest

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"regexp"
	"strings"

	"github.com/helmstore/helmstore/drivertest"
)

// A variant of a shape: what it does, and the statements that do it.
type variant struct {
	desc  string
	apply func(ctx context.Context, tp tamperer, where string, args []any) error
}

// reshapeHeadColumns are the columns of a head row the store reads,
// besides its key (and its body, in helmstore_bodies).
var reshapeHeadColumns = []string{"name", "version", "status", "owner", "created_at", "modified_at", "labels",
	"chart_digest", "values_digest", "manifest_digest", "values_base", "manifest_base"}

// Reshape damages the shape of rows (drivertest.Reshaper): a value set NULL
// (the column's NOT NULL constraint dropped first, as a schema made by hand
// or by another program may lack it), a row missing, a count or size far
// beyond what is stored, and, on SQLite, whose columns take values of any
// type, a value of another type. PostgreSQL and MySQL refuse a value of
// another type in a typed column: no WrongType variant there.
func (tp tamperer) Reshape(ctx context.Context, tg drivertest.Target, shape drivertest.Shape, i int) (string, error) {
	vs := tp.variants(tg, shape)
	if i >= len(vs) {
		return "", drivertest.ErrNoVariant
	}
	where, args := "namespace = ? AND release_key = ?", []any{tg.Namespace, tg.Key}
	if tg.Key == "" {
		where, args = "namespace = ? AND digest = ?", []any{tg.Namespace, tg.Part}
	}
	return vs[i].desc, vs[i].apply(ctx, tp, where, args)
}

func (tp tamperer) variants(tg drivertest.Target, shape drivertest.Shape) []variant {
	sqlite := tp.b.Dialect().Name == "sqlite"
	set := func(table, col, value string) variant {
		return variant{fmt.Sprintf("%s.%s set to %s", table, col, value), func(ctx context.Context, tp tamperer, where string, args []any) error {
			return tp.changed(ctx, "UPDATE "+table+" SET "+col+" = "+value+" WHERE "+where, args...)
		}}
	}
	null := func(table, col string) variant {
		return variant{fmt.Sprintf("%s.%s set to NULL", table, col), func(ctx context.Context, tp tamperer, where string, args []any) error {
			if err := tp.dropNotNull(ctx, table, col); err != nil {
				return fmt.Errorf("drop NOT NULL of %s.%s: %w", table, col, err)
			}
			return tp.changed(ctx, "UPDATE "+table+" SET "+col+" = NULL WHERE "+where, args...)
		}}
	}
	remove := func(table, desc string) variant {
		return variant{desc, func(ctx context.Context, tp tamperer, where string, args []any) error {
			return tp.changed(ctx, "DELETE FROM "+table+" WHERE "+where, args...)
		}}
	}
	var out []variant
	if tg.Key != "" {
		const t, body = "helmstore_releases", "helmstore_bodies"
		switch shape {
		case drivertest.MissingField:
			for _, c := range reshapeHeadColumns {
				out = append(out, null(t, c))
			}
			out = append(out, null(body, "body"),
				remove(body, "the release's helmstore_bodies row deleted (its head row kept)"),
				remove("helmstore_labels", "the release's helmstore_labels rows deleted (its labels column kept)"))
		case drivertest.WrongType:
			if sqlite {
				out = append(out, set(t, "version", "'x'"), set(t, "version", "1.5"), set(t, "created_at", "'x'"),
					set(t, "modified_at", "X'00'"), set(body, "body", "42"), set(t, "chart_digest", "42"), set(t, "labels", "42"))
			}
		}
		return out
	}
	const p, c = "helmstore_parts", "helmstore_part_chunks"
	switch shape {
	case drivertest.MissingField:
		out = append(out, null(p, "kind"), null(p, "raw_size"), null(p, "refs"), null(c, "data"))
		if sqlite { // elsewhere seq, in the primary key, cannot be NULL
			out = append(out, null(c, "seq"))
		}
		out = append(out, remove(p, "the part's helmstore_parts row deleted (its chunks kept)"))
	case drivertest.WrongType:
		if sqlite {
			out = append(out, set(p, "refs", "'x'"), set(p, "raw_size", "'x'"), set(p, "kind", "7"),
				set(c, "seq", "'x'"), set(c, "seq", "0.5"), set(c, "data", "'not a frame'"))
		}
	case drivertest.HugeCount:
		out = append(out, set(p, "refs", "1073741824"), set(c, "seq", "1073741824"))
	case drivertest.HugeSize:
		out = append(out, set(p, "raw_size", "1099511627776"))
	}
	return out
}

// changed runs a statement that must change at least one row.
func (tp tamperer) changed(ctx context.Context, q string, args ...any) error {
	n, err := tp.exec(ctx, q, args...)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%s: no row changed", q)
	}
	return nil
}

// notNull matches a column's NOT NULL in SQLite's stored CREATE TABLE
// statement (and the ADD COLUMN definitions appended to it).
func notNull(col string) *regexp.Regexp {
	return regexp.MustCompile(`(\b` + col + `\s+[A-Za-z]+\s+)NOT NULL`)
}

// nullable matches a column defined with its type alone in SQLite's
// stored CREATE TABLE statement (its NOT NULL dropped).
func nullable(col string) *regexp.Regexp {
	return regexp.MustCompile(`\b` + col + `\s+[A-Za-z]+\s*(,|\))`)
}

// dropNotNull lets column col of table hold NULL (again, if it can).
func (tp tamperer) dropNotNull(ctx context.Context, table, col string) error {
	db := tp.b.DB()
	switch tp.b.Dialect().Name {
	case "postgres":
		_, err := db.ExecContext(ctx, "ALTER TABLE "+table+" ALTER COLUMN "+col+" DROP NOT NULL")
		return err
	case "mysql":
		var typ string
		if err := db.QueryRowContext(ctx, "SELECT COLUMN_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?", table, col).Scan(&typ); err != nil {
			return err
		}
		_, err := db.ExecContext(ctx, "ALTER TABLE "+table+" MODIFY "+col+" "+typ+" NULL")
		return err
	case "sqlite":
		// SQLite cannot alter a constraint: edit the stored schema, on one
		// connection, and bump the schema version so that every
		// connection reads it again.
		conn, err := db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		var schema string
		var version int
		if err := conn.QueryRowContext(ctx, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", table).Scan(&schema); err != nil {
			return err
		}
		edited := notNull(col).ReplaceAllString(schema, "$1")
		if edited == schema {
			if nullable(col).MatchString(schema) {
				return nil // dropped already (the same damage done again)
			}
			return fmt.Errorf("no NOT NULL on %s in %q", col, schema)
		}
		if err := conn.QueryRowContext(ctx, "PRAGMA schema_version").Scan(&version); err != nil {
			return err
		}
		return execAll(ctx, conn,
			"PRAGMA writable_schema = ON",
			"UPDATE sqlite_master SET sql = '"+sqlQuote(edited)+"' WHERE type = 'table' AND name = '"+table+"'",
			fmt.Sprintf("PRAGMA schema_version = %d", version+1),
			"PRAGMA writable_schema = OFF")
	}
	return fmt.Errorf("dialect %s: cannot drop NOT NULL", tp.b.Dialect().Name)
}

func execAll(ctx context.Context, conn *stdsql.Conn, stmts ...string) error {
	for _, s := range stmts {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// sqlQuote doubles the single quotes of s, for a string literal.
func sqlQuote(s string) string {
	return strings.ReplaceAll(s, "'", "''")
}
