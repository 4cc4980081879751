package driver

import (
	"errors"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

const redacted = "xxxxx"

var (
	// key=value DSNs (libpq, ADO): password=secret or password='se cret'; an
	// unterminated quote runs to the end of the string.
	kvPassword = regexp.MustCompile(`(?i)\b(password|pwd|passwd|accountkey)\s*=\s*('(?:[^'\\]|\\.)*'|'.*|[^\s;&]*)`)
	// go-sql-driver/mysql DSNs: user:secret@tcp(host)/db
	mysqlDSN = regexp.MustCompile(`^([^:@/]*):(.*)@(tcp|unix|udp|tcp6|tcp4)?\(`)
	// user:secret@host... without a scheme (a mysql DSN missing its
	// net(address), say): the secret runs to the last '@'.
	bareUserinfo = regexp.MustCompile(`^([^:@/\s=]+):(.*)@`)
)

// passwordSpan returns where the password of conn's userinfo is, textually,
// so that strings no parser accepts (a bad port, a space in the host, a bad
// % escape) are redacted too. ok is false when conn holds no userinfo
// password.
func passwordSpan(conn string) (start, end int, ok bool) {
	if m := mysqlDSN.FindStringSubmatchIndex(conn); m != nil {
		return m[4], m[5], m[5] > m[4]
	}
	if i := strings.Index(conn, "://"); i >= 0 {
		rest := i + 3
		if u, err := url.Parse(conn); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				// A valid URL: its userinfo ends at the last '@' before the
				// path.
				ui := u.User.String()
				if strings.HasPrefix(conn[rest:], ui+"@") {
					c := strings.IndexByte(ui, ':')
					return rest + c + 1, rest + len(ui), len(ui) > c+1
				}
			}
		}
		// Not a URL url.Parse accepts (or one it reads oddly): the password
		// is everything between the first ':' after "//" and the last '@'.
		at := strings.LastIndexByte(conn[rest:], '@')
		if at < 0 {
			return 0, 0, false
		}
		c := strings.IndexByte(conn[rest:rest+at], ':')
		if c < 0 {
			return 0, 0, false
		}
		return rest + c + 1, rest + at, at > c+1
	}
	if strings.HasPrefix(conn, "file:") {
		return 0, 0, false // a sqlite URI: no userinfo
	}
	if m := bareUserinfo.FindStringSubmatchIndex(conn); m != nil {
		return m[4], m[5], m[5] > m[4]
	}
	return 0, 0, false
}

// Redact returns conn with any password replaced by "xxxxx". It understands
// URLs (postgres://u:p@h), key=value strings (password=p, AccountKey=p) and
// go-sql-driver/mysql DSNs (u:p@tcp(h)/db), valid or not: a string no parser
// accepts is redacted textually.
func Redact(conn string) string {
	if i, j, ok := passwordSpan(conn); ok {
		conn = conn[:i] + redacted + conn[j:]
	}
	return kvPassword.ReplaceAllString(conn, "${1}="+redacted)
}

// passwords returns the secrets conn holds, to scrub from error text: each
// as written and, when it is percent-encoded, decoded.
func passwords(conn string) []string {
	var out []string
	add := func(p string) {
		if p == "" {
			return
		}
		out = append(out, p)
		for _, unescape := range []func(string) (string, error){url.PathUnescape, url.QueryUnescape} {
			if d, err := unescape(p); err == nil && d != p && d != "" {
				out = append(out, d)
			}
		}
	}
	if i, j, ok := passwordSpan(conn); ok {
		add(conn[i:j])
	}
	for _, m := range kvPassword.FindAllStringSubmatch(conn, -1) {
		add(strings.Trim(m[2], "'"))
	}
	// Longest first, so that a password is not half-replaced by a shorter
	// one it contains.
	sort.Slice(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
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
	var secrets []string
	for _, p := range passwords(conn) {
		secrets = append(secrets, fragments(p)...)
	}
	sort.SliceStable(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	clean := msg
	for _, p := range secrets {
		clean = strings.ReplaceAll(clean, p, redacted)
	}
	if clean == msg {
		return err
	}
	return errors.New(clean)
}

// delimiters are the characters at which connection string parsers split
// text: a parser that read a password differently (cut at a '?' or '@',
// say) and redacted its own idea of it may still quote the rest.
const delimiters = "?@/:#&=;'\" \t%"

// fragments returns p and, when p holds delimiters, each of its runs
// that starts and ends at a delimiter or an end of p and has at least three
// characters, so that a piece of the password quoted by such a parser is
// scrubbed too.
func fragments(p string) []string {
	out := []string{p}
	if !strings.ContainsAny(p, delimiters) {
		return out
	}
	isDelim := func(i int) bool { return strings.IndexByte(delimiters, p[i]) >= 0 }
	var starts, ends []int
	for i := 0; i <= len(p); i++ {
		if i == 0 || (i < len(p) && (isDelim(i) || isDelim(i-1))) {
			starts = append(starts, i)
		}
		if i == len(p) || (i > 0 && (isDelim(i) || isDelim(i-1))) {
			ends = append(ends, i)
		}
	}
	for _, s := range starts {
		for _, e := range ends {
			if e-s < 3 || (s == 0 && e == len(p)) {
				continue
			}
			f := p[s:e]
			if strings.Trim(f, delimiters) != "" {
				out = append(out, f)
			}
		}
	}
	return out
}
