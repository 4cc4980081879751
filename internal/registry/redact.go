package registry

import (
	"errors"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

const redacted = "xxxxx"

var (
	// go-sql-driver/mysql DSNs: user:secret@tcp(host)/db
	mysqlDSN = regexp.MustCompile(`^([^:@/]*):(.*)@(tcp|unix|udp|tcp6|tcp4)?\(`)
	// user:secret@host... without a scheme (a mysql DSN missing its
	// net(address), say): the secret runs to the last '@'.
	bareUserinfo = regexp.MustCompile(`^([^:@/\s=]+):(.*)@`)
	// A URL's scheme and "://".
	urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)
	// A key passed alone: one token of base64 or base64url characters,
	// maybe padded (what an account key or an access key looks like).
	bareToken = regexp.MustCompile(`^[A-Za-z0-9+/_-]{20,}={0,2}$`)
)

// span is a secret's place in a connection string: conn[i:j].
type span struct{ i, j int }

// passwordSpan returns where the password of conn's userinfo is, textually,
// so that strings no parser accepts (a bad port, a space in the host, a bad
// % escape) are redacted too. ok is false when conn holds no userinfo
// password. In a redis:// or rediss:// URL, a userinfo without ':' is a
// password too (Redis's AUTH takes a password alone, and redis://SECRET@host
// is how many tools write it).
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
			if scheme := strings.ToLower(conn[:i]); scheme == "redis" || scheme == "rediss" {
				return rest, rest + at, at > 0
			}
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

// credentialNames are the key names whose values are secrets: libpq's
// password and sslpassword (and any name ending in password, such as a
// Sentinel's sentinel_password), passwd and pwd, and Cosmos DB's
// AccountKey.
var credentialNames = []string{"password", "passwd", "pwd", "accountkey"}

// knownKeys are the keys of our backends' key=value forms whose values are
// not secret (lower case): libpq's and pgx's, go-sql-driver/mysql's, and
// Cosmos DB's.
var knownKeys = map[string]bool{}

// adoKeys are the keys of a Cosmos DB connection string (lower case); a
// string with one of them is read as one, segment by segment.
var adoKeys = map[string]bool{
	"accountendpoint": true, "accountkey": true, "database": true, "container": true,
	"insecureskipverify": true, "allowweakconsistency": true,
}

func init() {
	for _, k := range strings.Fields(`host hostaddr port dbname user passfile connect_timeout
		client_encoding options application_name fallback_application_name keepalives
		keepalives_idle keepalives_interval keepalives_count tcp_user_timeout replication
		gssencmode sslmode requiressl sslcompression sslcert sslkey sslrootcert sslcrl sslcrldir
		sslsni sslnegotiation requirepeer ssl_min_protocol_version ssl_max_protocol_version
		krbsrvname gsslib gssdelegation service servicefile target_session_attrs
		load_balance_hosts search_path statement_timeout pool_max_conns pool_min_conns
		pool_max_conn_lifetime pool_max_conn_idle_time pool_health_check_period
		default_query_exec_mode statement_cache_capacity description_cache_capacity
		min_read_buffer_size
		allowallfiles allowcleartextpasswords allowfallbacktoplaintext allownativepasswords
		allowoldpasswords charset checkconnliveness clientfoundrows collation columnswithalias
		connectionattributes interpolateparams loc maxallowedpacket multistatements parsetime
		readtimeout rejectreadonly serverpubkey timeout tls writetimeout`) {
		knownKeys[k] = true
	}
	for k := range adoKeys {
		if k != "accountkey" {
			knownKeys[k] = true
		}
	}
}

// credentialKey reports whether key names a secret: one of credentialNames,
// a name ending in one (sslpassword, sentinel_password), or a misspelling
// of one (at most two edits away, one for pwd), also at the end of a longer
// name, unless it is a known key of another meaning.
func credentialKey(key string) bool {
	k := strings.ToLower(key)
	if k == "" || knownKeys[k] {
		return false
	}
	for _, c := range credentialNames {
		edits := 2
		if len(c) < 6 {
			edits = 1
		}
		for n := max(len(c)-edits, 1); n <= min(len(c)+edits, len(k)); n++ {
			if editDistance(k[len(k)-n:], c) <= edits {
				return true
			}
		}
	}
	return false
}

func isKeyChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.'
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// valueEnd returns where the value that starts at conn[i] ends: a quoted
// value at its closing quote (or the end of conn, if it has none),
// otherwise at one of stops, or at whitespace if spaceEnds.
func valueEnd(conn string, i int, stops string, spaceEnds bool) int {
	if i < len(conn) && (conn[i] == '\'' || conn[i] == '"') {
		q := conn[i]
		for j := i + 1; j < len(conn); j++ {
			switch conn[j] {
			case '\\':
				j++
			case q:
				return j + 1
			}
		}
		return len(conn)
	}
	j := i
	for j < len(conn) && !(spaceEnds && isSpace(conn[j])) && strings.IndexByte(stops, conn[j]) < 0 {
		j++
	}
	return j
}

// startsPair reports whether s starts with key=, for a key that is known or
// a credential: the next pair, not a value.
func startsPair(s string) bool {
	i := 0
	for i < len(s) && isKeyChar(s[i]) {
		i++
	}
	k := s[:i]
	for i < len(s) && isSpace(s[i]) {
		i++
	}
	if i >= len(s) || s[i] != '=' || k == "" {
		return false
	}
	return knownKeys[strings.ToLower(k)] || credentialKey(k)
}

// pairSpans returns the values of credential keys in conn[from:]: key=value
// (spaces allowed around '='), and, as a malformed string may have it, the
// key followed by ':' or spaces instead of '='. A value ends at one of
// stops, or at whitespace if spaceEnds, unless it is quoted.
func pairSpans(conn string, from int, stops string, spaceEnds bool) []span {
	var out []span
	for i := from; i < len(conn); {
		if !isKeyChar(conn[i]) {
			i++
			continue
		}
		j := i
		for j < len(conn) && isKeyChar(conn[j]) {
			j++
		}
		key := conn[i:j]
		i = j
		if !credentialKey(key) {
			continue
		}
		k := j
		for k < len(conn) && isSpace(conn[k]) {
			k++
		}
		spaced := k > j
		switch {
		case k < len(conn) && (conn[k] == '=' || conn[k] == ':'):
			k++
			for k < len(conn) && isSpace(conn[k]) {
				k++
			}
		case spaced && k < len(conn) && !startsPair(conn[k:]):
			// "password SECRET", "AccountKey SECRET": a missing '='.
		default:
			continue
		}
		if end := valueEnd(conn, k, stops, spaceEnds); end > k {
			out = append(out, span{k, end})
			i = end
		}
	}
	return out
}

// adoSpans returns, for a Cosmos DB string (Key=Value;Key=Value;...), every
// segment that is not a pair of a known key: a misspelt key name, a key
// without '=', a key passed as a segment of its own. The whole segment is
// secret, since its key part may be the key itself. ok is false when conn
// is not such a string.
func adoSpans(conn string) (out []span, ok bool) {
	type seg struct {
		i, j     int
		key      string
		hasValue bool
	}
	var segs []seg
	for i := 0; i <= len(conn); {
		j := strings.IndexByte(conn[i:], ';')
		if j < 0 {
			j = len(conn)
		} else {
			j += i
		}
		s, e := i, j
		for s < e && isSpace(conn[s]) {
			s++
		}
		for e > s && isSpace(conn[e-1]) {
			e--
		}
		if s < e {
			k, _, has := strings.Cut(conn[s:e], "=")
			k = strings.TrimSpace(k)
			if !has {
				k, _, _ = strings.Cut(k, " ")
			}
			segs = append(segs, seg{s, e, strings.ToLower(k), has})
			if adoKeys[strings.ToLower(k)] {
				ok = true
			}
		}
		i = j + 1
	}
	if !ok {
		return nil, false
	}
	for _, s := range segs {
		if s.key == "accountendpoint" && s.hasValue {
			v := s.i + strings.IndexByte(conn[s.i:s.j], '=') + 1
			out = append(out, endpointSpans(conn, v, s.j)...)
			continue
		}
		if s.hasValue && (adoKeys[s.key] && s.key != "accountkey" || credentialKey(s.key)) {
			continue // a known key, or a credential whose value pairSpans finds
		}
		out = append(out, span{s.i, s.j})
	}
	return out, true
}

// endpointSpans returns the parts of the endpoint URL conn[i:j] (a Cosmos DB
// AccountEndpoint) that can carry a credential: its user information, and
// its query and fragment whole (an endpoint needs neither; a SAS token or
// a key put there is a secret whatever its parameter's name).
func endpointSpans(conn string, i, j int) []span {
	var out []span
	u := conn[i:j]
	if at := strings.LastIndexByte(u, '@'); at >= 0 {
		start := 0
		if p := strings.Index(u, "://"); p >= 0 && p < at {
			start = p + 3
		}
		if at > start {
			out = append(out, span{i + start, i + at})
		}
	}
	if q := strings.IndexAny(u, "?#"); q >= 0 && q+1 < len(u) {
		out = append(out, span{i + q + 1, j})
	}
	return out
}

// looksLikeKey reports whether s, a whole connection string, is rather a
// key passed alone: one long token of base64 characters mixing upper and
// lower case letters and digits, with the entropy of a random string (at
// least 4 bits per character; words, such as a kubeconfig context's name,
// have less).
func looksLikeKey(s string) bool {
	if !bareToken.MatchString(s) || !strings.ContainsAny(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") ||
		!strings.ContainsAny(s, "abcdefghijklmnopqrstuvwxyz") || !strings.ContainsAny(s, "0123456789") {
		return false
	}
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	h := 0.0
	for _, n := range counts {
		if n > 0 {
			p := float64(n) / float64(len(s))
			h -= p * math.Log2(p)
		}
	}
	return h >= 4
}

// secretSpans returns where conn's secrets are, sorted and merged: the
// password of its userinfo (URLs, mysql DSNs), the values of credential keys
// (key=value strings, URL query parameters), the segments of a Cosmos DB
// string that are no known Key=Value, or the whole string when it looks
// like a key passed alone.
func secretSpans(conn string) []span {
	var out []span
	if i, j, ok := passwordSpan(conn); ok {
		out = append(out, span{i, j})
	}
	switch {
	case urlScheme.MatchString(conn):
		// Only the query holds key=value pairs; a query value ends at '&'
		// or '#'.
		if q := strings.IndexByte(conn, '?'); q >= 0 {
			out = append(out, pairSpans(conn, q+1, "&#", true)...)
		}
		// No store's URL takes a fragment: one is a secret pasted there.
		if f := strings.IndexByte(conn, '#'); f >= 0 && f+1 < len(conn) {
			out = append(out, span{f + 1, len(conn)})
		}
	default:
		if ado, ok := adoSpans(conn); ok {
			out = append(out, ado...)
			// A Cosmos DB value runs to ';', spaces and all.
			out = append(out, pairSpans(conn, 0, ";", false)...)
		} else if mysqlDSN.MatchString(conn) {
			out = append(out, pairSpans(conn, 0, "&", true)...)
		} else {
			out = append(out, pairSpans(conn, 0, "", true)...)
		}
		s, e := 0, len(conn)
		for s < e && isSpace(conn[s]) {
			s++
		}
		for e > s && (isSpace(conn[e-1]) || conn[e-1] == ';') {
			e--
		}
		if looksLikeKey(conn[s:e]) {
			out = append(out, span{s, e})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].i < out[b].i })
	var merged []span
	for _, s := range out {
		if n := len(merged); n > 0 && s.i <= merged[n-1].j {
			merged[n-1].j = max(merged[n-1].j, s.j)
			continue
		}
		merged = append(merged, s)
	}
	return merged
}

// Redact returns conn with every secret it may hold replaced by "xxxxx":
// the password of a URL (postgres://u:p@h; for redis:// also a userinfo
// without ':', redis://p@h) or of a go-sql-driver/mysql DSN (u:p@tcp(h)/db),
// the values of credential keys in key=value strings and URL queries
// (password=p, sslpassword=p, sentinel_password=p, AccountKey=p, and
// misspellings of them), the segments of a Cosmos DB string that are no
// Key=Value of a known key, and a string that is a key alone (one long
// random-looking token). Malformed strings are redacted too: textually, as
// no parser accepts them (a bad port, a missing '=' or '@', an unterminated
// quote).
func Redact(conn string) string {
	spans := secretSpans(conn)
	if len(spans) == 0 {
		return conn
	}
	var b strings.Builder
	last := 0
	for _, s := range spans {
		b.WriteString(conn[last:s.i])
		b.WriteString(redacted)
		last = s.j
	}
	b.WriteString(conn[last:])
	return b.String()
}

// passwords returns the secrets conn holds, to scrub from error text: each
// as written, without its quotes and, when it is percent-encoded, decoded.
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
	for _, s := range secretSpans(conn) {
		p := conn[s.i:s.j]
		add(p)
		if t := strings.Trim(p, `'"`); t != p {
			add(t)
		}
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
	clean := ScrubText(msg, conn)
	if clean == msg {
		return err
	}
	return errors.New(clean)
}

// ScrubText returns text with the passwords of connection string conn
// replaced by "xxxxx" (as written, percent-decoded, and as %q quotes them),
// and nothing else changed: for a message that may quote a secret a
// caller knows, where Redact, which finds the secrets of a connection
// string by its form, would take words of plain prose for them.
func ScrubText(text, conn string) string {
	var secrets []string
	for _, p := range passwords(conn) {
		for _, f := range fragments(p) {
			secrets = append(secrets, f)
			// As a %q verb quotes it (backslashes, quotes, control
			// characters escaped).
			if q := strconv.Quote(f); q[1:len(q)-1] != f {
				secrets = append(secrets, q[1:len(q)-1])
			}
		}
	}
	sort.SliceStable(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, p := range secrets {
		text = replaceSecret(text, p)
	}
	return text
}

// replaceSecret returns msg with p replaced by "xxxxx". A secret of fewer
// than four characters is replaced only where it is not part of a longer
// word, so that a one-letter password does not take every such letter out
// of the message.
func replaceSecret(msg, p string) string {
	if len(p) >= 4 {
		return strings.ReplaceAll(msg, p, redacted)
	}
	alnum := func(i int) bool {
		if i < 0 || i >= len(msg) {
			return false
		}
		c := msg[i]
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
	}
	var b strings.Builder
	for i := 0; i < len(msg); {
		if strings.HasPrefix(msg[i:], p) && !alnum(i-1) && !alnum(i+len(p)) {
			b.WriteString(redacted)
			i += len(p)
			continue
		}
		b.WriteByte(msg[i])
		i++
	}
	return b.String()
}

// delimiters are the characters at which connection string parsers split
// text: a parser that read a password differently (cut at a '?' or '@',
// say) and redacted its own idea of it may still quote the rest.
const delimiters = "?@/:#&=;'\" \t%\\"

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

// textTrim are the characters a message puts around a connection string it
// quotes: brackets, quotes and trailing punctuation.
const (
	textTrimLeft  = "([{<'\"`"
	textTrimRight = ")]}>'\"`,;:."
)

// RedactText returns text, a message, with Redact applied to each of its
// words that has the form of a connection string holding a secret (a URL
// with user information or a query, a go-sql-driver/mysql DSN, a
// key=value pair of a credential key), and nothing else changed: the
// prose around them (a server's "Access denied for user 'u'@'h' (using
// password: YES)") stays as written. A secret with spaces in it is not
// found this way: scrub a message of the connection strings a caller
// knows with ScrubText first.
func RedactText(text string) string {
	var b strings.Builder
	for i := 0; i < len(text); {
		j := i
		for j < len(text) && !isSpace(text[j]) {
			j++
		}
		if j == i {
			b.WriteByte(text[i])
			i++
			continue
		}
		word := text[i:j]
		core := strings.TrimLeft(word, textTrimLeft)
		lead := word[:len(word)-len(core)]
		core = strings.TrimRight(core, textTrimRight)
		trail := word[len(lead)+len(core):]
		if connLike(core) {
			word = lead + Redact(core) + trail
		}
		b.WriteString(word)
		i = j
	}
	return b.String()
}

// connLike reports whether a word of a message has the form of a
// connection string that may hold a secret.
func connLike(w string) bool {
	if i := strings.Index(w, "://"); i > 0 && urlScheme.MatchString(w) {
		return strings.ContainsAny(w[i+3:], "@?#")
	}
	if mysqlDSN.MatchString(w) {
		return true
	}
	if k, _, ok := strings.Cut(w, "="); ok && credentialKey(k) {
		return true
	}
	return strings.Contains(w, ";") && strings.Contains(strings.ToLower(w), "accountkey")
}
