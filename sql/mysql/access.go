package mysql

import (
	"strings"

	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// NamespaceAccess returns the SQL statements, for an account that owns the
// store's database (CREATE VIEW, and GRANT OPTION on it) to run once the
// store has been opened there (and its tables made), that confine user to
// the releases of namespaces. MySQL and MariaDB have no row-level
// security, so the statements make a database of views, views: one per
// table of database, named as the table, holding only the rows of those
// namespaces (WITH CHECK OPTION, so that a row of another namespace can be
// neither written nor moved in), and grant user those views alone (the
// schema version read-only). user is an existing account, "name" (any
// host) or "name@host". Running them again is harmless.
//
// user opens the store with views as its database (the connection
// string's /views). To it the releases of other namespaces do not exist:
// reads there find nothing, and writing a release there is refused with
// driver.ErrAccessDenied. The store sees that its tables are views and
// reads them without the index hints it gives its own tables (a view takes
// none), so MariaDB's planner chooses alone there. A schema migration that
// adds a table or a column leaves the views as they were: the store opened
// through them then fails, refused rather than widened, until the
// statements are run again after upgrading.
func NamespaceAccess(database, views, user string, namespaces ...string) []string {
	name, host := user, "%"
	if i := strings.LastIndexByte(user, '@'); i >= 0 {
		name, host = user[:i], user[i+1:]
	}
	account := quoteString(name) + "@" + quoteString(host)
	quoted := make([]string, len(namespaces))
	for i, ns := range namespaces {
		quoted[i] = quoteString(ns)
	}
	in := "namespace IN (" + strings.Join(quoted, ", ") + ")"
	if len(namespaces) == 0 {
		in = "FALSE"
	}
	db, vs := quoteIdent(database), quoteIdent(views)
	out := []string{"CREATE DATABASE IF NOT EXISTS " + vs}
	view := func(t, where string) string {
		return "CREATE OR REPLACE SQL SECURITY DEFINER VIEW " + vs + "." + quoteIdent(t) +
			" AS SELECT * FROM " + db + "." + quoteIdent(t) + where
	}
	for _, t := range sqlbackend.Tables() {
		out = append(out,
			view(t, " WHERE "+in+" WITH CASCADED CHECK OPTION"),
			"GRANT SELECT, INSERT, UPDATE, DELETE ON "+vs+"."+quoteIdent(t)+" TO "+account)
	}
	const version = "helmstore_schema_version"
	return append(out, view(version, ""), "GRANT SELECT ON "+vs+"."+quoteIdent(version)+" TO "+account)
}

// quoteIdent quotes a MySQL identifier.
func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// quoteString quotes a MySQL string literal (backslashes doubled as well,
// for servers without NO_BACKSLASH_ESCAPES).
func quoteString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}
