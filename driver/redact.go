package driver

import (
	"errors"
	"net/url"
	"regexp"
	"strings"
)

const redacted = "xxxxx"

var (
	// key=value DSNs (libpq, ADO): password=secret or password='se cret'
	kvPassword = regexp.MustCompile(`(?i)\b(password|pwd|passwd|accountkey)\s*=\s*('(?:[^'\\]|\\.)*'|[^\s;&]*)`)
	// go-sql-driver/mysql DSNs: user:secret@tcp(host)/db
	mysqlDSN = regexp.MustCompile(`^([^:@/]*):(.*)@(tcp|unix|udp|tcp6|tcp4)?\(`)
)

// Redact returns conn with any password replaced by "xxxxx". It understands
// URLs (postgres://u:p@h), key=value strings (password=p, AccountKey=p) and
// go-sql-driver/mysql DSNs (u:p@tcp(h)/db).
func Redact(conn string) string {
	if m := mysqlDSN.FindStringSubmatchIndex(conn); m != nil {
		conn = conn[:m[4]] + redacted + conn[m[5]:]
	} else if u, err := url.Parse(conn); err == nil && u.Scheme != "" && u.User != nil {
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), redacted)
		}
		conn = u.String()
		// url.String escapes nothing we care about here, but it leaves
		// query parameters as they were: fall through to scrub them.
	}
	return kvPassword.ReplaceAllString(conn, "${1}="+redacted)
}

// passwords returns the secrets conn holds, to scrub from error text.
func passwords(conn string) []string {
	var out []string
	if m := mysqlDSN.FindStringSubmatch(conn); m != nil && m[2] != "" {
		out = append(out, m[2])
	} else if u, err := url.Parse(conn); err == nil && u.User != nil {
		if p, has := u.User.Password(); has && p != "" {
			out = append(out, p)
			if raw := strings.SplitN(strings.SplitN(u.User.String(), ":", 2)[1], "@", 2)[0]; raw != p {
				out = append(out, raw) // percent-encoded form
			}
		}
	}
	for _, m := range kvPassword.FindAllStringSubmatch(conn, -1) {
		if v := strings.Trim(m[2], "'"); v != "" {
			out = append(out, v)
		}
	}
	return out
}

// scrub returns err with conn's passwords replaced in its text. When the
// text held a password, the chain is cut: an error further down would print
// the secret again.
func scrub(err error, conn string) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	clean := msg
	for _, p := range passwords(conn) {
		clean = strings.ReplaceAll(clean, p, redacted)
	}
	if clean == msg {
		return err
	}
	return errors.New(clean)
}

// ScrubError returns err with any password from conn removed from its text.
// Backends use it for errors that may quote their connection string.
func ScrubError(err error, conn string) error { return scrub(err, conn) }
