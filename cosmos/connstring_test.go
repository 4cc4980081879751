package cosmos

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
)

// leaked reports whether s holds secret, or any 12 characters of it in a
// row, in any letter case.
func leaked(s, secret string) bool {
	s, secret = strings.ToLower(s), strings.ToLower(secret)
	for i := 0; i+12 <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+12]) {
			return true
		}
	}
	return false
}

// TestParseErrorsNeverQuoteTheKey parses connection strings, well formed
// and malformed (issue 22 item 9's: a misspelt key name, a missing '=', a
// bare key as a segment or as the whole string; and a missing ';' or a key
// in the wrong slot), each holding an account key, and checks that no error
// of parseConnectionString holds the key (whatever registry.Redact would
// scrub later) and that a string it accepts carries the key as its
// AccountKey only: never in the endpoint, database or container, from
// which the SDK builds the URLs its errors quote.
func TestParseErrorsNeverQuoteTheKey(t *testing.T) {
	raw := make([]byte, 64)
	rand.Read(raw)
	keys := []string{
		base64.StdEncoding.EncodeToString(raw),     // an account key: 88 characters, '=' padded
		base64.StdEncoding.EncodeToString(raw[:4]), // a short one: "xxxxxx=="
		"Zq3uR8aLx0TbN2vWc5YpK7eHs9JdG1mF",         // FuzzRedact's kind of token
		"ab12+/cd34EF56gh78IJ90kl=",                // base64 characters, one '='
	}
	const ep = "AccountEndpoint=https://127.0.0.1:8081/"
	forms := []string{
		ep + ";AccountKey={V};Database=helm;Container=releases;",
		"AccountKey={V};" + ep + ";",
		ep + ";accountkey = {V} ;",
		// issue 22 item 9
		ep + ";AccountKy={V};Database=helm;",
		ep + ";AccountKey {V};Database=helm;",
		ep + ";AccountKey:{V};",
		ep + ";{V};Database=helm",
		"{V}", "{V};", "{V}=", " {V} ",
		// a ';' missing before or after the key
		"AccountEndpoint=https://127.0.0.1:8081/AccountKey={V};",
		"AccountEndpoint=https://127.0.0.1:8081/ AccountKey={V};",
		"AccountEndpoint=https://127.0.0.1:8081/?AccountKey={V};",
		"AccountEndpoint=https://127.0.0.1:8081/#AccountKey={V};",
		"AccountEndpoint=https://127.0.0.1:8081AccountKey={V};",
		ep + ";InsecureSkipVerify=trueAccountKey={V};",
		ep + ";AllowWeakConsistency=true AccountKey={V};",
		ep + ";Database=helmAccountKey={V};",
		ep + ";Database=helm AccountKey={V};Container=releases;",
		ep + ";Container=releasesAccountKey={V}",
		ep + ";AccountKey={V}Database=helm;",
		ep + ";AccountKey={V} Database=helm;",
		// a bad endpoint next to the key, the key in the wrong slot
		"AccountEndpoint=ftp://127.0.0.1:8081/;AccountKey={V};",
		"AccountEndpoint=AccountKey={V};",
		"AccountEndpoint={V};AccountKey=https://127.0.0.1:8081/;",
		"AccountEndpoint=https://{V}@127.0.0.1:8081/;",
		"AccountEndpoint=https://user:{V}@127.0.0.1:8081/;",
		ep + ";InsecureSkipVerify={V};",
		ep + ";AllowWeakConsistency={V};",
		ep + ";{V}=true;",
	}
	// Forms that name the key as the database or the container: accepted
	// if it makes a valid name (an error must not quote it either).
	named := map[string]bool{ep + ";Database={V};": true, ep + ";Container={V};": true}
	for f := range named {
		forms = append(forms, f)
	}
	for _, key := range keys {
		for _, form := range forms {
			conn := strings.ReplaceAll(form, "{V}", key)
			set, err := parseConnectionString(conn)
			if err != nil {
				if leaked(err.Error(), key) {
					t.Errorf("parse %q: the error holds the key: %v", form, err)
				}
				continue
			}
			if named[form] {
				continue
			}
			if set.key != key {
				t.Errorf("parse %q: accepted, with AccountKey %q; want an error or the key as AccountKey", form, set.key)
			}
			for what, v := range map[string]string{"AccountEndpoint": set.endpoint, "Database": set.database, "Container": set.container} {
				if leaked(v, key) {
					t.Errorf("parse %q: accepted, with the key in %s %q", form, what, v)
				}
			}
		}
	}
}
