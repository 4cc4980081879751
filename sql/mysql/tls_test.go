package mysql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// TLS to a real MariaDB that refuses plaintext: with tls-ca the store works;
// without TLS, or with a CA that did not sign the server, it is refused.
func TestMySQLTLS(t *testing.T) {
	srv := sqlenv.StartTLSMySQL(t)
	dsn := func(params string) string {
		return fmt.Sprintf("%s:%s@tcp(%s)/%s?%s", srv.User, srv.Password, srv.Addr, srv.Database, params)
	}
	s := sqltest.Open(t, "mysql", dsn("tls-ca="+srv.CAFile))
	defer s.Close()
	if err := s.Create(sqltest.Key("secure", 1), sqltest.Release("secure", "default", 1)); err != nil {
		t.Fatal(err)
	}
	if r, err := s.Get(sqltest.Key("secure", 1)); err != nil || r.Name != "secure" {
		t.Fatalf("get over TLS: %v", err)
	}
	for what, params := range map[string]string{
		"no TLS":                  "tls=false",
		"a CA that did not sign":  "tls-ca=" + testenv.OtherCA(t),
		"system roots (tls=true)": "tls=true",
	} {
		_, err := helm3.Open(context.Background(), "mysql", dsn(params))
		if err == nil {
			t.Fatalf("%s: connected to a TLS-only server", what)
		}
		if strings.Contains(err.Error(), srv.Password) || errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("%s: bad error %v", what, err)
		}
	}
}
