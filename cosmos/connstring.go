package cosmos

import (
	"encoding/base64"
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
// required: an http(s) URL of a host, with no user, path (but "/"), query or
// fragment. Without AccountKey the store authenticates with Azure AD through
// azidentity's default credential chain (environment, workload identity,
// managed identity, Azure CLI); an AccountKey must be base64. Database and
// Container default to "helm" and "releases", and hold no '=' or space (a
// missing ';' before the next pair looks like that). InsecureSkipVerify=true
// accepts any TLS certificate (for test servers and the emulator only);
// AllowWeakConsistency=true accepts an account whose default consistency is
// below what the store needs (consistency.go), for single-replica servers
// that report Session (the emulator, test servers) only.
//
// Errors never quote the key, nor anything that may hold it: a malformed
// string can put the key anywhere (a misspelt or unknown key name, a
// missing '=' or ';', a bare key, whose '=' padding makes it read as a key
// name), so they quote only key names and values of at most
// maxQuotedLetters letters (quotable) and say what is wrong with the rest.
// helm3.Open's error shows the string redacted besides.
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
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok {
			return set, fmt.Errorf("connection string: part %d is not Key=Value (not quoted here: it may hold a key)", i+1)
		}
		switch strings.ToLower(k) {
		case "accountendpoint":
			set.endpoint = v
		case "accountkey":
			if _, err := base64.StdEncoding.DecodeString(v); err != nil {
				return set, errors.New("connection string: AccountKey is not base64 (a ';' missing after it?)")
			}
			set.key = v
		case "database":
			set.database = v
		case "container":
			set.container = v
		case "insecureskipverify", "allowweakconsistency":
			b, err := strconv.ParseBool(v)
			if err != nil {
				if quotable(v) {
					return set, fmt.Errorf("connection string: %s=%q is not true or false", k, v)
				}
				return set, fmt.Errorf("connection string: the value of %s is not true or false (%s)", k, notQuoted)
			}
			if strings.EqualFold(k, "insecureskipverify") {
				set.insecure = b
			} else {
				set.allowWeak = b
			}
		default:
			const want = "want AccountEndpoint, AccountKey, Database, Container, InsecureSkipVerify, AllowWeakConsistency"
			if quotable(k) {
				return set, fmt.Errorf("connection string: unknown key %q (%s)", k, want)
			}
			return set, fmt.Errorf("connection string: part %d has an unknown key (%s; %s)", i+1, notQuoted, want)
		}
	}
	if set.endpoint == "" {
		return set, errors.New("connection string has no AccountEndpoint")
	}
	if why := badEndpoint(set.endpoint); why != "" {
		return set, fmt.Errorf("connection string: AccountEndpoint %s: want the account's URL, https://ACCOUNT.documents.azure.com:443/ (not quoted here: a missing ';' would put the key in it)", why)
	}
	for _, n := range []struct{ what, v string }{{"Database", set.database}, {"Container", set.container}} {
		if n.v == "" || strings.ContainsAny(n.v, "/\\?#= \t") || len(n.v) > 255 {
			return set, fmt.Errorf("connection string: %s must be 1 to 255 characters without / \\ ? # = or spaces (not quoted here: a missing ';' would put the key in it)", n.what)
		}
	}
	return set, nil
}

// maxQuotedLetters is the longest key name or value an error quotes, if it
// is all letters: an account key is 88 characters of base64.
const maxQuotedLetters = 24

// quotable reports whether an error may quote s: 1 to maxQuotedLetters
// ASCII letters (a key name, a misspelt "true").
func quotable(s string) bool {
	if s == "" || len(s) > maxQuotedLetters {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// notQuoted is what an error says of a key name or value it does not quote.
const notQuoted = "not quoted here: it may be, or hold, the account key"

// badEndpoint says what is wrong with an AccountEndpoint, or "" if nothing
// is.
func badEndpoint(endpoint string) string {
	u, err := url.Parse(endpoint)
	switch {
	case err != nil || strings.ContainsAny(endpoint, " \t"):
		return "is not a URL"
	case u.Scheme != "https" && u.Scheme != "http":
		return "is not an http or https URL"
	case u.Host == "":
		return "has no host"
	case u.User != nil:
		return "has a user"
	case u.Path != "" && u.Path != "/":
		return "has a path"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(endpoint, "#"):
		return "has a query or fragment"
	}
	return ""
}
