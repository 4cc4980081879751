// Package sqlbackend is the SQL engine the sql/postgres, sql/mysql and
// sql/sqlite dialects share: driver.Backend over a database/sql pool, with
// the schema's statements written once and a Dialect saying what differs
// (placeholders, upserts, row locks, error codes, chunk size, migrations).
// A dialect package turns its connection string into a database/sql
// connector, fills in a Dialect and calls Open, which does the rest (pool,
// connection check, migrations); a new database needs only that and its
// migrations. A failure of the server or of the connection to it (refused,
// dropped, killed, timed out) wraps driver.ErrUnavailable, so that it is
// never taken for "not found".
//
// # Storage
//
// A release is one row in helmstore_releases (its head: what a listing
// reads) and one in helmstore_bodies (the head's sealed body, kept apart so
// that listing many releases reads few pages), its custom labels
// are rows in helmstore_labels (indexed, so Query runs in the database), and
// its chart, values and manifest are content-addressed rows in helmstore_parts
// with their bytes in helmstore_part_chunks, stored once per namespace and
// reference-counted. Create, Update and Delete are each one transaction,
// run again (with backoff) after a deadlock, serialization failure or lock
// timeout. Writers lock their head, then the part rows they change in digest
// order, so concurrent writers sharing parts wait for each other but never
// deadlock. The schema is versioned and migrated on Open with
// pressly/goose (version table helmstore_schema_version), under the
// dialect's lock so that two processes opening at once are safe.
package sqlbackend
