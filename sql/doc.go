// Package sql stores Helm releases in SQL databases: one engine, thin
// dialects. Importing it registers three HELM_DRIVER names with package
// driver:
//
//	import (
//		"github.com/helmstore/helmstore/driver"
//		_ "github.com/helmstore/helmstore/sql" // postgres, mysql, sqlite
//	)
//
//	store, err := driver.Open(ctx, "sqlite", "/var/lib/mytool/helm.db")
//
// driver.Init opens the same stores from the environment: HELM_DRIVER names
// the store and HELM_DRIVER_<NAME>_CONNECTION_STRING
// (driver.ConnectionStringEnv) holds its connection string, as below.
// Errors and log lines never show a connection string's password.
//
// # postgres
//
// PostgreSQL through github.com/jackc/pgx/v5. The connection string is
// anything pgx.ParseConfig accepts, a URL or keyword/value pairs:
//
//	postgres://helm:secret@db.example.com:5432/helm?sslmode=verify-full
//	postgresql://helm@db.example.com/helm?sslmode=require&search_path=helm
//	host=db.example.com port=5432 user=helm password=secret dbname=helm sslmode=verify-full
//
// driver.Init reads it from HELM_DRIVER_POSTGRES_CONNECTION_STRING, else
// from Helm's own HELM_DRIVER_SQL_CONNECTION_STRING, so switching
// HELM_DRIVER=sql to postgres needs nothing else; an empty connection string
// is an error. As with libpq, what the string leaves out comes from the PG*
// environment variables (PGHOST, PGUSER, PGPASSWORD, PGSSLMODE, ...) and
// ~/.pgpass. A search_path parameter naming an existing schema puts
// helmstore's tables in that schema (create it first: Open does not).
//
// Unless the string sets its own, helmstore adds a 10 s connect timeout
// (connect_timeout, or PGCONNECT_TIMEOUT), TCP keepalive (30 s idle, then
// probes every 10 s, 3 of them: libpq's keepalives, keepalives_idle,
// keepalives_interval and keepalives_count parameters set these) and a
// server-side statement_timeout equal to the store's operation timeout
// (driver.DefaultTimeout, or driver.WithTimeout; none with WithTimeout(0)),
// so that no statement outlives its client.
//
// # mysql
//
// MySQL and MariaDB through github.com/go-sql-driver/mysql. The connection
// string is a go-sql-driver DSN or a mysql:// URL, and must name a database:
//
//	helm:secret@tcp(db.example.com:3306)/helm?tls=true
//	helm@unix(/run/mysqld/mysqld.sock)/helm
//	mysql://helm:secret@db.example.com:3306/helm?tls-ca=/etc/ssl/db-ca.pem
//
// In the DSN form the password may hold any character ('?', '@', '/', ':');
// in the URL form it is percent-encoded. Parameters are go-sql-driver's
// (https://github.com/go-sql-driver/mysql#parameters), and these for TLS:
//
//	tls=true                    TLS, the server verified against the system's roots
//	tls-ca=/path/ca.pem         TLS, the server verified against this CA (and its host name)
//	tls-cert=/path/cert.pem&tls-key=/path/key.pem
//	                            a client certificate, with either of the above
//	tls=skip-verify, tls=preferred
//	                            as go-sql-driver defines them
//
// tls-ca, tls-cert and tls-key are helmstore's own (go-sql-driver needs a
// registered tls.Config for these); with tls-ca or tls-cert, TLS 1.2 or
// later is required and the server's certificate must name the host of the
// address. Whatever
// the string says, helmstore sets what correctness needs: the utf8mb4
// character set, parseTime, no multi-statements, server-side placeholders
// (interpolateParams off) and a strict session sql_mode
// (STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION,
// replacing any the string or the server sets), and, unless the string sets
// them, a 10 s dial timeout and 5 min read and write timeouts. driver.Init
// reads it from HELM_DRIVER_MYSQL_CONNECTION_STRING.
//
// # sqlite
//
// SQLite through modernc.org/sqlite (pure Go, no cgo): the embedded
// default, no server needed. The connection string is
//
//	/var/lib/mytool/helm.db                    a file path (a relative one is from the working directory)
//	file:/var/lib/mytool/helm.db?_pragma=synchronous(NORMAL)
//	                                           a file: URI, with modernc.org/sqlite's parameters
//	:memory:                                   a database in memory, gone when the store is closed
//	(empty)                                    DefaultSQLitePath: helmstore.db in Helm's data directory
//
// The file is created if missing, but not its directory: a path whose
// directory does not exist is an error (more likely a typo than a wish for
// a new, empty store), except at the default location, whose directories
// are created (a fresh machine has no Helm data directory). Unless the URI
// sets them with _pragma,
// the database runs in WAL mode with synchronous=FULL and waits up to 30 s
// (busy_timeout) for another writer; write transactions always begin
// IMMEDIATE, so that two writers queue instead of failing. A writer that
// gives up waiting (after busy_timeout or at the operation's deadline,
// whichever comes first) gets an error wrapping a *LockedError. driver.Init
// reads it from HELM_DRIVER_SQLITE_CONNECTION_STRING.
//
// # Storage
//
// A release is one row in helmstore_releases (its head), its custom labels
// are rows in helmstore_labels (indexed, so Query runs in the database), and
// its chart, values and manifest are content-addressed rows in helmstore_parts
// with their bytes in helmstore_part_chunks, stored once per namespace and
// reference-counted. Create, Update and Delete are each one transaction. The
// schema is versioned and migrated on Open with pressly/goose, under a lock
// so that two processes opening at once are safe.
package sql
