package driver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"

	"helm.sh/helm/v3/pkg/action"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	_ "github.com/helmstore/helmstore/sql"
)

// leaks reports whether s shows any of a password's ends: every password
// below starts with "Zq7" and ends with "W9x".
func leaks(s string) bool { return strings.Contains(s, "Zq7") || strings.Contains(s, "W9x") }

// Connection strings that no parser accepts must not leak their password
// either: not through Redact, nor through the errors of Open and Init.
func TestRedactMalformedConnectionStrings(t *testing.T) {
	cases := []struct {
		name, conn string
		redacted   string // Redact's result, when it is checked exactly
	}{
		// Rejected by url.Parse.
		{"postgres", "postgres://u:Zq7pw9W9x@127.0.0.1:notaport/db", "postgres://u:xxxxx@127.0.0.1:notaport/db"},
		{"postgres", "postgres://u:Zq7pw9W9x@127.0.0 .1:1/db", "postgres://u:xxxxx@127.0.0 .1:1/db"},
		{"postgres", "postgres://u:Zq7p%zzW9x@127.0.0.1:1/db", "postgres://u:xxxxx@127.0.0.1:1/db"},
		{"postgres", "postgres://u:Zq7p?w/@W9x@127.0.0.1:1/db", "postgres://u:xxxxx@127.0.0.1:1/db"},
		{"postgres", "postgres://u:Zq7123/4W9x@127.0.0.1:1/db", "postgres://u:xxxxx@127.0.0.1:1/db"},
		{"mysql", "mysql://u:Zq7pw9W9x@127.0.0.1:notaport/db", "mysql://u:xxxxx@127.0.0.1:notaport/db"},
		{"mysql", "mysql://u:Zq7p%zzW9x@127.0.0.1:1/db", "mysql://u:xxxxx@127.0.0.1:1/db"},
		// Bad MySQL parameters and DSNs.
		{"mysql", "u:Zq7pw9W9x@tcp(127.0.0.1:1)/db?timeout=bogus", "u:xxxxx@tcp(127.0.0.1:1)/db?timeout=bogus"},
		{"mysql", "u:Zq7pw9W9x@tcp(127.0.0.1:1)/db?x=%zz", "u:xxxxx@tcp(127.0.0.1:1)/db?x=%zz"},
		{"mysql", "mysql://u:Zq7pw9W9x@127.0.0.1:1/db?x=%zz", "mysql://u:xxxxx@127.0.0.1:1/db?x=%zz"},
		{"mysql", "u:Zq7pw9W9x@127.0.0.1:1/db", "u:xxxxx@127.0.0.1:1/db"},
		{"mysql", "u:Zq7p?w@/:W9x@tcp(127.0.0.1:1/db", "u:xxxxx@tcp(127.0.0.1:1/db"},
		// Malformed key=value strings.
		{"postgres", "host=127.0.0.1 port=1 password='Zq7p w W9x user=u", "host=127.0.0.1 port=1 password=xxxxx"},
		{"postgres", "host=127.0.0.1 port=notaport password=Zq7pw9W9x", "host=127.0.0.1 port=notaport password=xxxxx"},
		// Valid ones.
		{"postgres", "postgres://u:Zq7pw9W9x@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", "postgres://u:xxxxx@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"},
		{"postgres", "postgres://u:Zq7p%3Fw%40W9x@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", "postgres://u:xxxxx@127.0.0.1:1/db?sslmode=disable&connect_timeout=2"},
		{"postgres", "host=127.0.0.1 port=1 user=u password=Zq7pw9W9x connect_timeout=2", "host=127.0.0.1 port=1 user=u password=xxxxx connect_timeout=2"},
		{"mysql", "u:Zq7p?w@/:W9x@tcp(127.0.0.1:1)/db?timeout=2s", "u:xxxxx@tcp(127.0.0.1:1)/db?timeout=2s"},
		{"mysql", "mysql://u:Zq7p%3Fw%40%2F%3AW9x@127.0.0.1:1/db?timeout=2s", "mysql://u:xxxxx@127.0.0.1:1/db?timeout=2s"},
	}
	// Strings without passwords are left alone.
	for _, conn := range []string{"/var/lib/helm@1.db", "file:/var/lib/helm@1.db?mode=rwc", "postgres://u@h:5432/db", "tcp(h:3306)/db"} {
		if got := driver.Redact(conn); got != conn {
			t.Errorf("Redact(%q) = %q", conn, got)
		}
	}
	getter := genericclioptions.NewConfigFlags(false)
	for _, c := range cases {
		t.Run(c.conn, func(t *testing.T) {
			if got := driver.Redact(c.conn); leaks(got) || (c.redacted != "" && got != c.redacted) {
				t.Errorf("Redact = %q, want %q", got, c.redacted)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			_, err := helm3.Open(ctx, c.name, c.conn)
			if err == nil {
				t.Fatal("opened")
			}
			if leaks(err.Error()) {
				t.Errorf("Open error holds the password: %v", err)
			}
			t.Setenv(driver.ConnectionStringEnv(c.name), c.conn)
			err = helm3.Init(new(action.Configuration), getter, "default", c.name, nil)
			if err == nil {
				t.Fatal("Init succeeded")
			}
			if leaks(err.Error()) {
				t.Errorf("Init error holds the password: %v", err)
			}
		})
	}
}

// Redact takes out every secret of the forms FuzzRedact plants them in, and
// leaves strings without secrets as they are.
func TestRedactForms(t *testing.T) {
	const key = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
	for _, c := range []struct{ conn, want string }{
		// A password alone in a redis URL's user slot.
		{"redis://Zq7pw9W9x@127.0.0.1:1/0", "redis://xxxxx@127.0.0.1:1/0"},
		{"rediss://Zq7p%40w9W9x@127.0.0.1:1/0", "rediss://xxxxx@127.0.0.1:1/0"},
		// Credential parameters whose name only ends in password.
		{"postgres://u@h/db?sslpassword=Zq7pw9W9x&sslmode=disable", "postgres://u@h/db?sslpassword=xxxxx&sslmode=disable"},
		{"redis://h:1/0?master_name=m&sentinel_password=Zq7pw9W9x", "redis://h:1/0?master_name=m&sentinel_password=xxxxx"},
		{"host=h sslpassword=Zq7pw9W9x dbname=d", "host=h sslpassword=xxxxx dbname=d"},
		// A libpq value runs to whitespace, ';' and '&' included.
		{"host=h password=Zq7p;w&9W9x dbname=d", "host=h password=xxxxx dbname=d"},
		// A missing '=', a misspelt key name.
		{"host=h password Zq7pw9W9x dbname=d", "host=h password xxxxx dbname=d"},
		{"host=h pasword=Zq7pw9W9x dbname=d", "host=h pasword=xxxxx dbname=d"},
		{"postgres://u@h/db?passwrod=Zq7pw9W9x&sslmode=disable", "postgres://u@h/db?passwrod=xxxxx&sslmode=disable"},
		// Cosmos DB: a value runs to ';'; a misspelt AccountKey, one without
		// '=', a bare key as a segment or as the whole string.
		{"AccountEndpoint=https://h/;AccountKey=Zq7p w9W9x;Database=helm;", "AccountEndpoint=https://h/;AccountKey=xxxxx;Database=helm;"},
		{"AccountEndpoint=https://h/;AccountKy=Zq7pw9W9x;Database=helm;", "AccountEndpoint=https://h/;AccountKy=xxxxx;Database=helm;"},
		{"AccountEndpoint=https://h/;AccountKey " + key + ";Database=helm;", "AccountEndpoint=https://h/;xxxxx;Database=helm;"},
		{"AccountEndpoint=https://h/;" + key + ";Database=helm;", "AccountEndpoint=https://h/;xxxxx;Database=helm;"},
		{key, "xxxxx"},
		{key + ";", "xxxxx;"},
	} {
		if got := driver.Redact(c.conn); got != c.want {
			t.Errorf("Redact(%q) = %q, want %q", c.conn, got, c.want)
		}
	}
	for _, conn := range []string{
		"redis://127.0.0.1:6379/0",
		"rediss://redis.example:6380/0?tls_ca_file=/etc/ca.pem",
		"redis://10.0.0.1:7000,10.0.0.2:7000,10.0.0.3:7000",
		"redis://cluster.example:7000?cluster=true&key_prefix=helm",
		"postgresql://helm@db.example.com/helm?sslmode=require&search_path=helm",
		"host=db.example.com port=5432 user=helm dbname=helm sslmode=verify-full",
		"helm@unix(/run/mysqld/mysqld.sock)/helm",
		"mysql://helm@db.example.com:3306/helm?allowNativePasswords=true",
		"/var/lib/mytool/helm.db", ":memory:", "file:/var/lib/mytool/helm.db?_pragma=synchronous(NORMAL)",
		"AccountEndpoint=https://acct.documents.azure.com:443/;Database=helm;Container=releases;",
		// kubeconfig contexts (crsplit)
		"staging", "gke_my-project_us-central1-a_my-cluster", "kind-helmstore", "arn:aws:eks:us-west-2:123456789012:cluster/prod",
	} {
		if got := driver.Redact(conn); got != conn {
			t.Errorf("Redact(%q) = %q, want it unchanged", conn, got)
		}
	}
}
