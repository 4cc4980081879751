// Package postgres registers the HELM_DRIVER name "postgres" with package
// driver: importing it is all a program needs to open PostgreSQL stores.
//
//	import (
//		"github.com/helmstore/helmstore/helm3"
//		_ "github.com/helmstore/helmstore/sql/postgres"
//	)
//
//	store, err := helm3.Open(ctx, "postgres", "postgres://helm@db.example.com/helm")
//
// A program that imports only this package links neither SQLite nor the
// MySQL driver (package sql imports all three dialects).
//
// PostgreSQL through github.com/jackc/pgx/v5. The connection string is
// anything pgx.ParseConfig accepts, a URL or keyword/value pairs:
//
//	postgres://helm:secret@db.example.com:5432/helm?sslmode=verify-full
//	postgresql://helm@db.example.com/helm?sslmode=require&search_path=helm
//	host=db.example.com port=5432 user=helm password=secret dbname=helm sslmode=verify-full
//
// helm3.Init reads it from HELM_DRIVER_POSTGRES_CONNECTION_STRING, else
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
// (driver.DefaultTimeout, or helm3.WithTimeout; none with WithTimeout(0)),
// so that no statement outlives its client.
//
// The tables, and how releases are stored in them, are package sqlbackend's.
package postgres
