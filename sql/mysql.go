package sql

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	stdsql "database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/pressly/goose/v3"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
)

func mysqlCode(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

var mysqlDialect = dialect{
	name:      "mysql",
	goose:     goose.DialectMySQL,
	forUpdate: " FOR UPDATE",
	isUnique:  func(err error) bool { return mysqlCode(err) == 1062 },
	isRetryable: func(err error) bool {
		switch mysqlCode(err) {
		case 1213, 1205: // deadlock, lock wait timeout
			return true
		}
		return false
	},
	lockMigrations: func(ctx context.Context, db *stdsql.DB) (goose.ProviderOption, func(), error) {
		// A named lock held on one connection while goose migrates on others.
		conn, err := db.Conn(ctx)
		if err != nil {
			return nil, nil, err
		}
		var got stdsql.NullInt64
		if err := conn.QueryRowContext(ctx, "SELECT GET_LOCK(CONCAT('helmstore-migrate-', DATABASE()), 300)").Scan(&got); err != nil {
			conn.Close()
			return nil, nil, err
		}
		if got.Int64 != 1 {
			conn.Close()
			return nil, nil, errors.New("timed out waiting for another process to finish migrating")
		}
		return nil, func() {
			conn.ExecContext(context.Background(), "SELECT RELEASE_LOCK(CONCAT('helmstore-migrate-', DATABASE()))")
			conn.Close()
		}, nil
	},
}

// Parameters of a mysql connection string that helmstore reads itself (the
// rest go to github.com/go-sql-driver/mysql).
const (
	paramTLSCA   = "tls-ca"   // PEM file of CAs to verify the server with (implies TLS)
	paramTLSCert = "tls-cert" // PEM client certificate, with tls-key
	paramTLSKey  = "tls-key"
)

// mysqlConfig parses conn — a go-sql-driver DSN (user:pass@tcp(host:3306)/db?...)
// or a mysql:// URL — and sets what correctness needs whatever it says:
// utf8mb4, no multi-statements, server-side placeholders, timeouts.
func mysqlConfig(conn string) (*mysql.Config, error) {
	if conn == "" {
		return nil, fmt.Errorf("no connection string: set %s to user:password@tcp(host:3306)/database", driver.ConnectionStringEnv("mysql"))
	}
	if strings.HasPrefix(conn, "mysql://") {
		u, err := url.Parse(conn)
		if err != nil {
			return nil, fmt.Errorf("invalid connection URL: %w", err)
		}
		userinfo := ""
		if u.User != nil {
			userinfo = u.User.Username()
			if p, ok := u.User.Password(); ok {
				userinfo += ":" + p
			}
			userinfo += "@"
		}
		conn = userinfo + "tcp(" + u.Host + ")" + u.Path
		if u.RawQuery != "" {
			conn += "?" + u.RawQuery
		}
	}
	base, query, _ := strings.Cut(conn, "?")
	params, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("invalid connection string parameters: %w", err)
	}
	ca, cert, key := params.Get(paramTLSCA), params.Get(paramTLSCert), params.Get(paramTLSKey)
	params.Del(paramTLSCA)
	params.Del(paramTLSCert)
	params.Del(paramTLSKey)
	if enc := params.Encode(); enc != "" {
		base += "?" + enc
	}
	cfg, err := mysql.ParseDSN(base)
	if err != nil {
		return nil, fmt.Errorf("invalid connection string: %w", err)
	}
	if cfg.DBName == "" {
		return nil, errors.New("the connection string names no database (…/database)")
	}
	cfg.ParseTime = true
	cfg.MultiStatements = false
	cfg.InterpolateParams = false
	cfg.Collation = "utf8mb4_general_ci"
	delete(cfg.Params, "charset")
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 5 * time.Minute
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 5 * time.Minute
	}
	if ca != "" || cert != "" {
		tc, err := tlsConfig(cfg, ca, cert, key)
		if err != nil {
			return nil, err
		}
		cfg.TLS = tc
	}
	return cfg, nil
}

func tlsConfig(cfg *mysql.Config, ca, cert, key string) (*tls.Config, error) {
	host := cfg.Addr
	if h, _, ok := strings.Cut(cfg.Addr, ":"); ok {
		host = h
	}
	tc := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", paramTLSCA, err)
		}
		tc.RootCAs = x509.NewCertPool()
		if !tc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no PEM certificates in %s", paramTLSCA, ca)
		}
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("%s/%s: %w", paramTLSCert, paramTLSKey, err)
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// openMySQL opens a MySQL or MariaDB store.
func openMySQL(ctx context.Context, cfg *driver.Config) (driver.Store, error) {
	mc, err := mysqlConfig(cfg.ConnectionString)
	if err != nil {
		return nil, err
	}
	connector, err := mysql.NewConnector(mc)
	if err != nil {
		return nil, fmt.Errorf("invalid connection string: %w", err)
	}
	db := stdsql.OpenDB(connector)
	db.SetMaxIdleConns(16)
	db.SetConnMaxLifetime(30 * time.Minute)
	// Parts are chunked under the server's max_allowed_packet, read now, so
	// users never need to raise it.
	var maxPacket int
	if err := db.QueryRowContext(ctx, "SELECT @@max_allowed_packet").Scan(&maxPacket); err != nil {
		db.Close()
		return nil, fmt.Errorf("connect: %w", err)
	}
	d := mysqlDialect
	d.maxChunk = mysqlChunkSize(maxPacket)
	b, err := newBackend(ctx, db, &d)
	if err != nil {
		return nil, err
	}
	return engine.New(b, cfg), nil
}

// mysqlChunkSize leaves room in a packet for the statement around the chunk.
func mysqlChunkSize(maxPacket int) int {
	c := maxPacket/2 - 64<<10
	if c > 8<<20 {
		c = 8 << 20
	}
	if c < 64<<10 {
		c = 64 << 10
	}
	return c
}
