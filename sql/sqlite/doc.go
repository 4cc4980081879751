// Package sqlite registers the HELM_DRIVER name "sqlite" with package
// driver: importing it is all a program needs to keep releases in a SQLite
// file, with no server.
//
//	import (
//		"github.com/helmstore/helmstore/helm3"
//		_ "github.com/helmstore/helmstore/sql/sqlite"
//	)
//
//	store, err := helm3.Open(ctx, "sqlite", "/var/lib/mytool/helm.db")
//
// A program that imports only this package links neither the PostgreSQL
// nor the MySQL driver (package sql imports all three dialects).
//
// SQLite through modernc.org/sqlite (pure Go, no cgo). The connection
// string is
//
//	/var/lib/mytool/helm.db                    a file path (a relative one is from the working directory)
//	file:/var/lib/mytool/helm.db?_pragma=synchronous(NORMAL)
//	                                           a file: URI, with modernc.org/sqlite's parameters
//	:memory:                                   a database in memory, gone when the store is closed
//	(empty)                                    DefaultPath: helmstore.db in Helm's data directory
//
// The file is created if missing, but not its directory: a path whose
// directory does not exist is an error (more likely a typo than a wish for
// a new, empty store), except at the default location, whose directories
// are created (a fresh machine has no Helm data directory). Unless the URI
// sets them with _pragma, the database runs in WAL mode with
// synchronous=FULL and waits up to 30 s (busy_timeout) for another writer;
// write transactions always begin
// IMMEDIATE, so that two writers queue instead of failing. A writer that
// gives up waiting (after busy_timeout or at the operation's deadline,
// whichever comes first) gets an error wrapping a *LockedError. helm3.Init
// reads it from HELM_DRIVER_SQLITE_CONNECTION_STRING.
//
// The tables, and how releases are stored in them, are package sqlbackend's.
package sqlite
