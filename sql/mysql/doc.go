// Package mysql registers the HELM_DRIVER name "mysql" with package
// driver, for MySQL and MariaDB: importing it is all a program needs to
// open them.
//
//	import (
//		"github.com/helmstore/helmstore/helm3"
//		_ "github.com/helmstore/helmstore/sql/mysql"
//	)
//
//	store, err := helm3.Open(ctx, "mysql", "helm:secret@tcp(db.example.com:3306)/helm")
//
// A program that imports only this package links neither SQLite nor the
// PostgreSQL driver (package sql imports all three dialects).
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
// address. Whatever the string says, helmstore sets what correctness
// needs: the utf8mb4 character set, parseTime, no multi-statements, server-side placeholders
// (interpolateParams off) and a strict session sql_mode
// (STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION,
// replacing any the string or the server sets), and, unless the string sets
// them, a 10 s dial timeout and 5 min read and write timeouts. helm3.Init
// reads it from HELM_DRIVER_MYSQL_CONNECTION_STRING.
//
// The tables, and how releases are stored in them, are package sqlbackend's.
//
// An account confined to some namespaces opens the store on a database of
// views that NamespaceAccess makes: to it other namespaces' releases do not
// exist, and writing one there is driver.ErrAccessDenied.
package mysql
