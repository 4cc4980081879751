package cosmos

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/helmstore/helmstore/driver"
)

// Defaults of the connection string's Database and Container.
const (
	DefaultDatabase  = "helm"
	DefaultContainer = "releases"
)

// settings is what the connection string says.
type settings struct {
	endpoint  string
	key       string // "" for Azure AD credentials (azidentity's default chain)
	database  string
	container string
	// insecure skips TLS certificate verification (test servers with a
	// self-signed certificate only).
	insecure bool
	// allowWeak accepts an account whose default consistency is weaker
	// than the protocol needs (single-replica servers only).
	allowWeak bool
}

// parseConnectionString reads Azure's connection-string form extended with
// helmstore's own keys:
//
//	AccountEndpoint=https://ACCOUNT.documents.azure.com:443/;AccountKey=KEY;Database=helm;Container=releases;
//
// Keys are case-insensitive, pairs are separated by ';' and a value runs to
// the next ';' (a key's trailing '=' padding is kept). AccountEndpoint is
// required; without AccountKey the store authenticates with Azure AD through
// azidentity's default credential chain (environment, workload identity,
// managed identity, Azure CLI). Database and Container default to "helm" and
// "releases". InsecureSkipVerify=true accepts any TLS certificate (for test
// servers and the emulator only); AllowWeakConsistency=true accepts an
// account whose default consistency is below what the store needs
// (consistency.go), for single-replica servers that report Session (the
// emulator, test servers) only. Errors never quote the key.
func parseConnectionString(s string) (settings, error) {
	set := settings{database: DefaultDatabase, container: DefaultContainer}
	if strings.TrimSpace(s) == "" {
		return set, fmt.Errorf("no connection string: set %s to AccountEndpoint=https://...;AccountKey=...;Database=...;Container=...;", driver.ConnectionStringEnv(Name))
	}
	for i, pair := range strings.Split(s, ";") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok {
			return set, fmt.Errorf("connection string: part %d is not Key=Value (not quoted here: it may hold a key)", i+1)
		}
		switch strings.ToLower(k) {
		case "accountendpoint":
			set.endpoint = strings.TrimSpace(v)
		case "accountkey":
			set.key = strings.TrimSpace(v)
		case "database":
			set.database = strings.TrimSpace(v)
		case "container":
			set.container = strings.TrimSpace(v)
		case "insecureskipverify", "allowweakconsistency":
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return set, fmt.Errorf("connection string: %s=%q is not true or false", k, v)
			}
			if strings.EqualFold(k, "insecureskipverify") {
				set.insecure = b
			} else {
				set.allowWeak = b
			}
		default:
			return set, fmt.Errorf("connection string: unknown key %q (want AccountEndpoint, AccountKey, Database, Container, InsecureSkipVerify, AllowWeakConsistency)", k)
		}
	}
	if set.endpoint == "" {
		return set, errors.New("connection string has no AccountEndpoint")
	}
	u, err := url.Parse(set.endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return set, fmt.Errorf("connection string: AccountEndpoint %q is not an http(s) URL", set.endpoint)
	}
	for _, n := range []struct{ what, v string }{{"Database", set.database}, {"Container", set.container}} {
		if n.v == "" || strings.ContainsAny(n.v, `/\?#`) || len(n.v) > 255 {
			return set, fmt.Errorf("connection string: %s %q must be 1 to 255 characters without / \\ ? #", n.what, n.v)
		}
	}
	return set, nil
}
