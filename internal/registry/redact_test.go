package registry_test

import (
	"testing"

	"github.com/helmstore/helmstore/internal/registry"
)

// Redact takes out every secret of the forms helm3's FuzzRedact plants them in, and
// leaves strings without secrets as they are.
func TestRedactForms(t *testing.T) {
	t.Parallel()
	const key = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="
	for _, c := range []struct{ conn, want string }{
		// A Cosmos DB endpoint's query, fragment and user information,
		// whatever the parameters are called (a SAS token, a key).
		{"AccountEndpoint=https://acct.documents.azure.com:443/?x=Zq7pw9W9x;AccountKey=" + key + ";",
			"AccountEndpoint=https://acct.documents.azure.com:443/?xxxxx;AccountKey=xxxxx;"},
		{"AccountEndpoint=https://u:Zq7pw9W9x@acct.documents.azure.com:443/#Zq7pw9W9x;AccountKey=k;",
			"AccountEndpoint=https://xxxxx@acct.documents.azure.com:443/#xxxxx;AccountKey=xxxxx;"},
		{"AccountEndpoint=https://acct.documents.azure.com:443/?sv=2022&sig=Zq7pw9W9x;Database=helm;",
			"AccountEndpoint=https://acct.documents.azure.com:443/?xxxxx;Database=helm;"},
		// A URL's fragment, which no store takes.
		{"postgres://u@h/db?sslmode=disable#Zq7pw9W9x", "postgres://u@h/db?sslmode=disable#xxxxx"},
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
		if got := registry.Redact(c.conn); got != c.want {
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
		if got := registry.Redact(conn); got != conn {
			t.Errorf("Redact(%q) = %q, want it unchanged", conn, got)
		}
	}
}

// RedactText takes the secrets out of the connection strings a message
// quotes and leaves its prose, the servers' words included, as written.
func TestRedactText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ text, want string }{
		{"helmstore: open mysql (helmu:Zq7pw9W9x@tcp(127.0.0.1:3306)/test): connect: Error 1045 (28000): Access denied for user 'helmu'@'127.0.0.1' (using password: YES)",
			"helmstore: open mysql (helmu:xxxxx@tcp(127.0.0.1:3306)/test): connect: Error 1045 (28000): Access denied for user 'helmu'@'127.0.0.1' (using password: YES)"},
		{"helmstore: open postgres (postgres://u:Zq7pw9W9x@127.0.0.1:54x32/db): cannot parse `postgres://u:Zq7pw9W9x@127.0.0.1:54x32/db`: invalid port",
			"helmstore: open postgres (postgres://u:xxxxx@127.0.0.1:54x32/db): cannot parse `postgres://u:xxxxx@127.0.0.1:54x32/db`: invalid port"},
		{"dial redis://:Zq7pw9W9x@10.0.0.1:6379/0, then host=h password=Zq7pw9W9x dbname=d.",
			"dial redis://:xxxxx@10.0.0.1:6379/0, then host=h password=xxxxx dbname=d."},
		{"open cosmos (AccountEndpoint=https://h/;AccountKey=Zq7pw9W9x;): 401",
			"open cosmos (AccountEndpoint=https://h/;AccountKey=xxxxx;): 401"},
		// Prose alone: nothing changes, words with ':' and '@' included.
		{"Error: release: not found; user helm@example.com: password: required (see https://helm.sh/docs)",
			"Error: release: not found; user helm@example.com: password: required (see https://helm.sh/docs)"},
		{"  two  spaces\tand a tab stay  ", "  two  spaces\tand a tab stay  "},
	} {
		if got := registry.RedactText(c.text); got != c.want {
			t.Errorf("RedactText(%q)\n = %q\nwant %q", c.text, got, c.want)
		}
	}
}
