package helm3_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/registry"

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
		if got := registry.Redact(conn); got != conn {
			t.Errorf("Redact(%q) = %q", conn, got)
		}
	}
	getter := genericclioptions.NewConfigFlags(false)
	for _, c := range cases {
		t.Run(c.conn, func(t *testing.T) {
			if got := registry.Redact(c.conn); leaks(got) || (c.redacted != "" && got != c.redacted) {
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
