package postgres

import (
	"strings"

	"github.com/helmstore/helmstore/sql/sqlbackend"
	"github.com/jackc/pgx/v5"
)

// NamespaceAccess returns the SQL statements, for the owner of the store's
// tables to run once the store has been opened (and its schema made), that
// confine role, an existing role, to the releases of namespaces: row-level
// security on each of the store's tables, and a policy per table letting
// role see, add, change and remove only rows of those namespaces. schema
// is the schema the tables are in (the connection string's search_path;
// "public" by default). Running them again is harmless.
//
// The owner of the tables is not subject to the policies and still sees
// every namespace; any other role needs a policy of its own (these
// statements, or BYPASSRLS) once they have run. To role, the releases of
// other namespaces do not exist: reads there find nothing, and writing a
// release there is refused with driver.ErrAccessDenied. A schema migration
// that adds a table (helmstore_bodies, in schema version 4) leaves a role
// confined before it without a grant there, so that its reads are refused
// rather than widened: run the statements again after upgrading.
func NamespaceAccess(schema, role string, namespaces ...string) []string {
	sch := pgx.Identifier{schema}.Sanitize()
	r := pgx.Identifier{role}.Sanitize()
	quoted := make([]string, len(namespaces))
	for i, ns := range namespaces {
		quoted[i] = "'" + strings.ReplaceAll(ns, "'", "''") + "'"
	}
	in := "namespace IN (" + strings.Join(quoted, ", ") + ")"
	if len(namespaces) == 0 {
		in = "false"
	}
	tables := sqlbackend.Tables()
	for i, t := range tables {
		tables[i] = sch + "." + pgx.Identifier{t}.Sanitize()
	}
	out := []string{
		"GRANT USAGE ON SCHEMA " + sch + " TO " + r,
		"GRANT SELECT ON " + sch + "." + pgx.Identifier{"helmstore_schema_version"}.Sanitize() + " TO " + r,
		"GRANT SELECT, INSERT, UPDATE, DELETE ON " + strings.Join(tables, ", ") + " TO " + r,
	}
	policy := pgx.Identifier{"helmstore_ns_" + role}.Sanitize()
	for _, t := range tables {
		out = append(out,
			"ALTER TABLE "+t+" ENABLE ROW LEVEL SECURITY",
			"DROP POLICY IF EXISTS "+policy+" ON "+t,
			"CREATE POLICY "+policy+" ON "+t+" TO "+r+" USING ("+in+") WITH CHECK ("+in+")",
		)
	}
	return out
}
