package mysql

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/helmstore/helmstore/driver"

	gomysql "github.com/go-sql-driver/mysql"
)

// Parameters of a mysql connection string that helmstore reads itself (the
// rest go to github.com/go-sql-driver/mysql).
const (
	paramTLSCA   = "tls-ca"   // PEM file of CAs to verify the server with (implies TLS)
	paramTLSCert = "tls-cert" // PEM client certificate, with tls-key
	paramTLSKey  = "tls-key"
)

// mysqlSQLMode is the sql_mode of every helmstore session, whatever the
// server's default or the connection string says: strict, so that a value
// too long or out of range for its column fails the write instead of being
// truncated, clamped or mangled.
const mysqlSQLMode = "'STRICT_ALL_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION'"

// mysqlDSNAddr matches what follows the userinfo of a go-sql-driver DSN:
// an optional net(address), the database and the start of the parameters.
var mysqlDSNAddr = regexp.MustCompile(`^(?:[a-z0-9]*\([^)]*\))?/[^/?@]*(?:\?|$)`)

// splitMySQLDSN splits a go-sql-driver DSN into its user, password, the
// net(address)/database part and the raw query. The password may hold any
// character ('?', '@', '/', ':'): the userinfo ends at the first '@' that is
// followed by a well-formed net(address)/database.
func splitMySQLDSN(dsn string) (user, pass, rest, query string, err error) {
	at := -1
	if !mysqlDSNAddr.MatchString(dsn) {
		for i := 0; i < len(dsn); i++ {
			if dsn[i] == '@' && mysqlDSNAddr.MatchString(dsn[i+1:]) {
				at = i
				break
			}
		}
		if at < 0 {
			return "", "", "", "", errors.New("not of the form user:password@tcp(host:3306)/database?param=value")
		}
		user, pass, _ = strings.Cut(dsn[:at], ":")
	}
	rest = dsn[at+1:]
	m := mysqlDSNAddr.FindString(rest)
	if strings.HasSuffix(m, "?") {
		return user, pass, m[:len(m)-1], rest[len(m):], nil
	}
	return user, pass, m, rest[len(m):], nil
}

// mysqlConfig parses conn — a go-sql-driver DSN (user:pass@tcp(host:3306)/db?...)
// or a mysql:// URL — and sets what correctness needs whatever it says:
// utf8mb4, a strict sql_mode, no multi-statements, server-side placeholders,
// timeouts.
func mysqlConfig(conn string) (*gomysql.Config, error) {
	if conn == "" {
		return nil, fmt.Errorf("no connection string: set %s to user:password@tcp(host:3306)/database", driver.ConnectionStringEnv("mysql"))
	}
	var user, pass, rest, query string
	if strings.HasPrefix(conn, "mysql://") {
		u, err := url.Parse(conn)
		if err != nil {
			return nil, fmt.Errorf("invalid connection URL: %w", err)
		}
		if u.User != nil {
			user = u.User.Username()
			pass, _ = u.User.Password()
		}
		rest = "tcp(" + u.Host + ")/" + url.PathEscape(strings.TrimPrefix(u.Path, "/"))
		query = u.RawQuery
	} else {
		var err error
		if user, pass, rest, query, err = splitMySQLDSN(conn); err != nil {
			return nil, fmt.Errorf("invalid connection string: %w", err)
		}
	}
	params, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("invalid connection string parameters: %w", err)
	}
	ca, cert, key := params.Get(paramTLSCA), params.Get(paramTLSCert), params.Get(paramTLSKey)
	params.Del(paramTLSCA)
	params.Del(paramTLSCert)
	params.Del(paramTLSKey)
	if enc := params.Encode(); enc != "" {
		rest += "?" + enc
	}
	// The userinfo is set after parsing, so that its characters never meet
	// the DSN syntax.
	cfg, err := gomysql.ParseDSN(rest)
	if err != nil {
		return nil, fmt.Errorf("invalid connection string: %w", err)
	}
	cfg.User, cfg.Passwd = user, pass
	if cfg.DBName == "" {
		return nil, errors.New("the connection string names no database (…/database)")
	}
	cfg.ParseTime = true
	cfg.MultiStatements = false
	cfg.InterpolateParams = false
	cfg.Collation = "utf8mb4_general_ci"
	delete(cfg.Params, "charset")
	if cfg.Params == nil {
		cfg.Params = map[string]string{}
	}
	for k := range cfg.Params {
		if strings.EqualFold(k, "sql_mode") {
			delete(cfg.Params, k)
		}
	}
	cfg.Params["sql_mode"] = mysqlSQLMode
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

func tlsConfig(cfg *gomysql.Config, ca, cert, key string) (*tls.Config, error) {
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
