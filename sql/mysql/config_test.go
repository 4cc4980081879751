package mysql

import (
	"strings"
	"testing"
)

func TestMySQLConfig(t *testing.T) {
	cfg, err := mysqlConfig("u:p@tcp(db:3306)/helm?multiStatements=true&interpolateParams=true&charset=latin1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.MultiStatements || cfg.InterpolateParams || !cfg.ParseTime || cfg.Collation != "utf8mb4_general_ci" || cfg.Params["charset"] != "" || cfg.Timeout == 0 {
		t.Fatalf("correctness settings not enforced: %+v", cfg)
	}
	cfg, err = mysqlConfig("mysql://u:p%40ss@db:3307/helm?tls=skip-verify")
	if err != nil || cfg.Addr != "db:3307" || cfg.Passwd != "p@ss" || cfg.DBName != "helm" || cfg.TLSConfig != "skip-verify" {
		t.Fatalf("URL form: %+v, %v", cfg, err)
	}
	if _, err := mysqlConfig("u:p@tcp(db)/helm?tls-ca=/nonexistent.pem"); err == nil || !strings.Contains(err.Error(), "tls-ca") {
		t.Fatalf("missing CA file: %v", err)
	}
	if _, err := mysqlConfig("u:p@tcp(db)/"); err == nil {
		t.Fatal("a DSN without a database was accepted")
	}
}

func TestMySQLConfigStrictMode(t *testing.T) {
	for _, dsn := range []string{
		"u:p@tcp(db)/helm",
		"u:p@tcp(db)/helm?sql_mode=%27%27",
		"u:p@tcp(db)/helm?SQL_MODE=ANSI",
		"mysql://u:p@db/helm?sql_mode=%27%27",
	} {
		cfg, err := mysqlConfig(dsn)
		if err != nil {
			t.Fatalf("%s: %v", dsn, err)
		}
		if len(cfg.Params) != 1 || cfg.Params["sql_mode"] != mysqlSQLMode {
			t.Errorf("%s: params %v, want only sql_mode=%s", dsn, cfg.Params, mysqlSQLMode)
		}
	}
}

func TestMySQLConfigPasswordParsing(t *testing.T) {
	for _, c := range []struct{ conn, user, pass, addr, db, timeout string }{
		{"u:p?w@/:d@tcp(db:3306)/helm?timeout=7s", "u", "p?w@/:d", "db:3306", "helm", "7s"},
		{"u:p)w@tcp(db:3306)/helm", "u", "p)w", "db:3306", "helm", ""},
		{"u:a@b@/helm?timeout=7s", "u", "a@b", "127.0.0.1:3306", "helm", "7s"},
		{"u@unix(/run/mysqld/mysqld.sock)/helm?timeout=7s", "u", "", "/run/mysqld/mysqld.sock", "helm", "7s"},
		{"tcp(db)/helm", "", "", "db:3306", "helm", ""},
		{"mysql://u:p%3Fw%40%2F%3Ad@db/helm?timeout=7s", "u", "p?w@/:d", "db:3306", "helm", "7s"},
	} {
		cfg, err := mysqlConfig(c.conn)
		if err != nil {
			t.Errorf("%s: %v", c.conn, err)
			continue
		}
		if cfg.User != c.user || cfg.Passwd != c.pass || cfg.Addr != c.addr || cfg.DBName != c.db {
			t.Errorf("%s: user %q pass %q addr %q db %q", c.conn, cfg.User, cfg.Passwd, cfg.Addr, cfg.DBName)
		}
		if c.timeout != "" && cfg.Timeout.String() != c.timeout {
			t.Errorf("%s: timeout %v, want %s", c.conn, cfg.Timeout, c.timeout)
		}
	}
	// Parameters may hold slashes (a CA path) after a password with '?'.
	if _, err := mysqlConfig("u:p?w@tcp(db)/helm?tls-ca=/nonexistent/ca.pem"); err == nil || !strings.Contains(err.Error(), "tls-ca") {
		t.Fatalf("tls-ca after a password with '?': %v", err)
	}
}
