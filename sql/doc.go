// Package sql stores Helm releases in SQL databases. Importing it registers
// all three SQL HELM_DRIVER names with package driver:
//
//	import (
//		"github.com/helmstore/helmstore/helm3"
//		_ "github.com/helmstore/helmstore/sql" // postgres, mysql, sqlite
//	)
//
//	store, err := helm3.Open(ctx, "sqlite", "/var/lib/mytool/helm.db")
//
// Each name is also its own package, which registers it alone, so that a
// program links only the database drivers it uses (the SQLite driver, pure
// Go, is most of the size):
//
//	postgres  github.com/helmstore/helmstore/sql/postgres  PostgreSQL, through pgx
//	mysql     github.com/helmstore/helmstore/sql/mysql     MySQL and MariaDB, through go-sql-driver/mysql
//	sqlite    github.com/helmstore/helmstore/sql/sqlite    SQLite, through modernc.org/sqlite
//
// Their documentation gives the connection strings each accepts.
// helm3.Init opens the same stores from the environment: HELM_DRIVER names
// the store and HELM_DRIVER_<NAME>_CONNECTION_STRING
// (driver.ConnectionStringEnv) holds its connection string. Errors and log
// lines never show a connection string's password.
//
// The three share one engine, package sqlbackend: the same tables,
// statements and transactions, with a sqlbackend.Dialect for what differs.
package sql
