package helm3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/registry"

	"helm.sh/helm/v3/pkg/action"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/klog/v2"

	_ "github.com/helmstore/helmstore/cosmos"
	_ "github.com/helmstore/helmstore/crsplit"
	_ "github.com/helmstore/helmstore/redis"
	_ "github.com/helmstore/helmstore/sql"
)

// FuzzRedact checks that no secret planted in a connection string ever
// comes out: not in registry.Redact's output, not in any error of helm3.Open
// or helm3.Init (the whole chain), not in any log line (the store's log,
// helm3.WithLog, and the process's standard and klog loggers).
//
// The secret is a token T of 32 distinct characters of [A-Za-z0-9] (upper
// and lower case letters and digits: a high-entropy token), drawn from the
// input's seed. It is planted inside a credential value V = pre + T + post
// (pre and post come from the input, filtered to what the position can hold
// without ending the value), placed where a credential is, or where one may
// be when the string is malformed:
//
//   - the password of a URL's userinfo (scheme://user:V@host, any scheme,
//     percent-encoded or raw): what follows the first ':' after "://", up
//     to the last '@';
//   - the whole userinfo of a redis:// or rediss:// URL that has no ':'
//     (redis://V@host: Redis's AUTH takes a password alone);
//   - the value of a key=value pair or URL query parameter whose key names a
//     credential (password, sslpassword, sentinel_password, AccountKey),
//     quoted or not, or a misspelling of it (one edit), or that name
//     followed by a space or ':' instead of '=' (AccountKey V);
//   - the password of a go-sql-driver/mysql DSN (user:V@tcp(host)/db);
//   - in a Cosmos DB string (AccountEndpoint=...;...), a segment that is no
//     Key=Value pair of a known key: the whole segment may be the key;
//   - the whole string, when it is T alone (with base64 padding or a ';');
//   - for crsplit, the kubeconfig's credentials: the user's token or
//     password, or the password of the server URL's userinfo.
//
// The rest of the string follows each backend's documented forms (docs/library.md
// "Environment variables", each package's doc), with every host at a closed
// loopback port, so that Open fails at once and offline. The input also
// picks which backend opens the string: its own or any other (a
// connection string given to the wrong HELM_DRIVER must not leak either).
//
// A leak is T, or any 12 characters of it, anywhere in an output, in any
// letter case.
func FuzzRedact(f *testing.F) {
	env := newRedactEnv(f)
	for _, s := range redactSeeds() {
		f.Add(s.form, s.variant, s.target, s.seed, s.pre, s.post, s.junk)
	}
	f.Fuzz(func(t *testing.T, form, variant, target uint8, seed uint64, pre, post, junk string) {
		c := env.build(t, form, variant, target, seed, pre, post, junk)
		env.check(t, c)
	})
}

// redactSeed is one entry of FuzzRedact's seed corpus.
type redactSeed struct {
	form, variant, target uint8
	seed                  uint64
	pre, post, junk       string
}

// redactSeeds are every form as documented (variant 0), each of its
// variants once (raw and encoded, each way of writing its key name), with a
// plain or a delimiter-laden credential in turn, each opened by its own
// backend; and each form opened by every other backend once.
func redactSeeds() []redactSeed {
	var out []redactSeed
	decorations := [][2]string{{"", ""}, {"p?w@/:", "@:#&;'=x"}, {"a b", "\\'\"%zz"}}
	for i, fm := range redactForms {
		n := 2
		if strings.Contains(fm.tmpl, "{K:") {
			n = 2 * len(keyOps)
		} else if fm.enc == encBare {
			n = 4
		}
		for v := 0; v < n; v++ {
			d := decorations[v%len(decorations)]
			out = append(out, redactSeed{form: uint8(i), variant: uint8(v), seed: uint64(i*1000 + v), pre: d[0], post: d[1], junk: "x"})
		}
		for tgt := 1; tgt <= len(redactDrivers); tgt++ {
			if redactDrivers[tgt-1] != fm.driver {
				d := decorations[tgt%len(decorations)]
				out = append(out, redactSeed{form: uint8(i), variant: uint8(tgt), target: uint8(tgt), seed: uint64(i*1000 + 900 + tgt), pre: d[0], post: d[1], junk: "y"})
			}
		}
	}
	// Inputs the fuzzer found, kept as they were.
	for _, r := range []struct {
		tmpl            string
		variant, target uint8
		seed            uint64
		pre, post, junk string
	}{
		// crsplit's "no context %q" error quoted a libpq string whose
		// quoted sslpassword held a backslash: %q doubles it, and the
		// scrubbed text no longer matched.
		{"host=127.0.0.1 port={P} dbname=helm{J} sslmode=verify-full {K:sslpassword}{V}", 8, 6, 0, "0", "\\0", "0"},
	} {
		out = append(out, redactSeed{form: formIndex(r.tmpl), variant: r.variant, target: r.target, seed: r.seed, pre: r.pre, post: r.post, junk: r.junk})
	}
	return out
}

// formIndex returns the index in redactForms of the form with template tmpl.
func formIndex(tmpl string) uint8 {
	for i, f := range redactForms {
		if f.tmpl == tmpl {
			return uint8(i)
		}
	}
	panic("no form " + tmpl)
}

// redactDrivers are the backends FuzzRedact opens strings with; target 0
// is the form's own, target k the (k-1)th of these (mod their number).
var redactDrivers = []string{"postgres", "mysql", "sqlite", "redis", "cosmos", "crsplit"}

// encoding says how a form's credential value is written into the string,
// and so which characters pre and post may hold there.
type encoding int

const (
	// encUserinfo: the password of a URL's userinfo; variant bit 0 picks
	// raw (without '/', '?', '#' or spaces, which would make a parser read
	// the password as a host) or percent-encoded.
	encUserinfo encoding = iota
	// encRedisUser: the whole userinfo of a redis URL, without ':'.
	encRedisUser
	// encQuery: a URL query parameter's value; raw (without '&', '#',
	// spaces) or query-escaped.
	encQuery
	// encLibpq: a libpq key=value value; raw (no spaces, quotes or
	// backslashes) or single-quoted with \' and \\ escapes.
	encLibpq
	// encLibpqOpen: a single-quoted libpq value never closed (the form ends
	// with it).
	encLibpqOpen
	// encADO: a Cosmos DB connection string value (runs to ';').
	encADO
	// encDSN: a go-sql-driver/mysql DSN password, raw (no '?' or spaces).
	encDSN
	// encBare: T alone; variant picks a suffix: none, "=", "==" or ";".
	encBare
	// encKubeToken, encKubePassword, encKubeServer: crsplit's kubeconfig
	// holds the credential (the user's bearer token, its basic-auth
	// password, the server URL's userinfo password); the connection string
	// names a context.
	encKubeToken
	encKubePassword
	encKubeServer
)

// redactForm is a connection string with its credential position. tmpl's
// placeholders: {H} a closed loopback host:port, {P} its port, {D} a
// directory that does not exist, {J} junk from the input (what the position
// can hold), {K:name} a credential key name and its '=' (which the variant
// may misspell, or replace by a space or ':'), {V} the credential value.
type redactForm struct {
	driver, tmpl string
	enc          encoding
}

// keyOps are the ways a {K:name} placeholder is written, by variant>>1.
var keyOps = []string{"=", "misspelt", " ", " = ", "case", ":"}

// redactForms are each backend's documented connection strings (docs/*.md,
// package docs) and the malformed ones issue 22 names, with the credential
// at {V}.
var redactForms = []redactForm{
	// postgres (sql/postgres doc): URLs and libpq key=value strings.
	{"postgres", "postgres://helm:{V}@{H}/helm{J}?sslmode=disable&connect_timeout=1", encUserinfo},
	{"postgres", "postgresql://helm:{V}@{H}/helm?sslmode=verify-full&search_path=helm{J}", encUserinfo},
	{"postgres", "postgres://helm:{V}@127.0.0.1:{J}/helm", encUserinfo},                       // bad port
	{"postgres", "postgres://helm:{V}@127.0.0 .1:{P}/helm{J}", encUserinfo},                   // space in host
	{"postgres", "postgres://helm:{V}@{H},{H}/helm{J}?target_session_attrs=any", encUserinfo}, // host list
	{"postgres", "postgres://helm@{H}/helm{J}?sslmode=disable&{K:password}{V}", encQuery},
	{"postgres", "postgres://helm@{H}/helm?{K:sslpassword}{V}&sslmode=disable{J}", encQuery},
	{"postgres", "host=127.0.0.1 port={P} user=helm {K:password}{V} dbname=helm{J} sslmode=disable", encLibpq},
	{"postgres", "host=127.0.0.1 port={P} dbname=helm{J} sslmode=verify-full {K:sslpassword}{V}", encLibpq},
	{"postgres", "host=127.0.0.1 port=x{J} user=helm {K:password}{V}", encLibpq}, // bad port
	{"postgres", "host=127.0.0.1 port={P} user=helm dbname=helm{J} {K:password}{V}", encLibpqOpen},
	// mysql (sql/mysql doc): go-sql-driver DSNs and mysql:// URLs.
	{"mysql", "helm:{V}@tcp({H})/helm{J}?tls=false&timeout=1s", encDSN},
	{"mysql", "helm:{V}@unix({D}/mysqld.sock)/helm{J}", encDSN},
	{"mysql", "helm:{V}@tcp({H})/helm?timeout=bogus{J}", encDSN}, // bad parameter
	{"mysql", "helm:{V}@tcp({H}/helm{J}", encDSN},                // no ')'
	{"mysql", "helm:{V}@{H}/helm{J}", encDSN},                    // no net(...)
	{"mysql", "mysql://helm:{V}@{H}/helm{J}?tls-ca={D}/ca.pem", encUserinfo},
	{"mysql", "mysql://helm:{V}@127.0.0.1:{J}/helm", encUserinfo}, // bad port
	// sqlite (sql/sqlite doc): paths and file: URIs hold no credential of
	// their own; a URI's userinfo or a password parameter still is one.
	{"sqlite", "file://helm:{V}@localhost{D}/helm.db{J}", encUserinfo},
	{"sqlite", "file:{D}/helm.db?_pragma=synchronous(NORMAL)&{K:password}{V}{J}", encQuery},
	// redis (redis doc): standalone, ACL, TLS, Cluster, Sentinel.
	{"redis", "redis://helm:{V}@{H}/2{J}", encUserinfo},
	{"redis", "redis://:{V}@{H}/0?dial_timeout=1s{J}", encUserinfo},
	{"redis", "redis://{V}@{H}/0{J}", encRedisUser}, // a password in the user slot
	{"rediss", "rediss://{V}@{H}/0?tls_ca_file={D}/ca.pem{J}", encRedisUser},
	{"redis", "rediss://helm:{V}@{H}/0?tls_ca_file={D}/ca.pem{J}", encUserinfo},
	{"redis", "redis://helm:{V}@{H},{H},{H}/0{J}", encUserinfo}, // Cluster seeds
	{"redis", "redis://:{V}@{H}?cluster=true&key_prefix=x{J}", encUserinfo},
	{"redis", "redis://:{V}@{H}/0?master_name=mymaster&password=secret{J}", encUserinfo}, // Sentinel
	{"redis", "redis://{H},{H}/0?master_name=mymaster&{K:password}{V}{J}", encQuery},
	{"redis", "redis://{H}/0?master_name=mymaster&{K:sentinel_password}{V}{J}", encQuery},
	{"redis", "redis://helm:{V}@127.0.0.1:{J}/0", encUserinfo}, // bad port
	{"redis", "redis://helm:{V}@{H}/0?dial_timeout=bogus{J}", encUserinfo},
	// cosmos (cosmos doc): Azure's form, and the malformed ones of issue 22
	// item 9 (a misspelt key name, a missing '=', a bare key).
	{"cosmos", "AccountEndpoint=https://{H}/;{K:AccountKey}{V};Database=helm{J};Container=releases;InsecureSkipVerify=true;", encADO},
	{"cosmos", "{K:AccountKey}{V};AccountEndpoint=https://{H}/;AllowWeakConsistency=true{J}", encADO},
	{"cosmos", "AccountEndpoint=https://{H}/{J};{K:AccountKey}{V}", encADO},
	{"cosmos", "AccountEndpoint=https://{H}/;{V};Database=helm{J}", encADO}, // a bare key as a segment
	{"cosmos", "AccountEndpoint=https://{H}/;AccountKy={V};Database=helm{J};", encADO},
	{"cosmos", "AccountEndpoint=https://{H}/;AccountKey {V};Database=helm{J};", encADO},
	{"cosmos", "AccountEndpoint=ftp://{H}/{J};{K:AccountKey}{V};", encADO},     // bad endpoint
	{"cosmos", "AccountEndpoint=https://{H}/?x={V};Database=helm{J};", encADO}, // the endpoint's query (a SAS token)
	{"cosmos", "AccountEndpoint=https://{H}/#{V};Database=helm{J};", encADO},   // its fragment
	{"cosmos", "{V}", encBare}, // a bare key as the whole string
	// crsplit (crsplit doc): a kubeconfig context; the credentials are the
	// kubeconfig's.
	{"crsplit", "", encKubeToken},
	{"crsplit", "helm{J}", encKubeToken},
	{"crsplit", "", encKubePassword},
	{"crsplit", "helm", encKubeServer},
}

// redactCase is one built connection string.
type redactCase struct {
	driver, conn, secret string
	getter               genericclioptions.RESTClientGetter
	what                 string // the form, for failure messages
}

// redactEnv is what every iteration shares: a closed port, a directory
// that does not exist, a kubeconfig, and the captured process logs.
type redactEnv struct {
	port, missing, dir string
	kubeconfig         string
	logs               *syncBuffer
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.b.String()
	s.b.Reset()
	return out
}

func newRedactEnv(f *testing.F) *redactEnv {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close() // nothing listens there now: every dial is refused at once
	dir := f.TempDir()
	env := &redactEnv{port: port, dir: dir, missing: filepath.Join(dir, "missing"), logs: &syncBuffer{}}
	// Whatever a parser falls back to is offline too: libpq's defaults,
	// Helm's data directory (sqlite's default path), the kubeconfig.
	f.Setenv("PGHOST", "127.0.0.1")
	f.Setenv("PGPORT", port)
	f.Setenv("PGPASSFILE", filepath.Join(env.missing, "pgpass"))
	f.Setenv("PGSERVICEFILE", filepath.Join(env.missing, "pg_service.conf"))
	f.Setenv("HELM_DATA_HOME", filepath.Join(dir, "helm"))
	env.kubeconfig = env.writeKubeconfig(f, "helm", "https://127.0.0.1:"+port, &clientcmdapi.AuthInfo{Token: "not-a-secret"})
	f.Setenv("KUBECONFIG", env.kubeconfig)
	// The process's own loggers: the standard one and client-go's klog.
	log.SetOutput(env.logs)
	klog.LogToStderr(false)
	klog.SetOutput(env.logs)
	f.Cleanup(func() {
		log.SetOutput(os.Stderr)
		klog.SetOutput(os.Stderr)
		klog.LogToStderr(true)
	})
	return env
}

// writeKubeconfig writes a kubeconfig with one context, ctx, to server as
// user.
func (e *redactEnv) writeKubeconfig(tb testing.TB, ctx, server string, user *clientcmdapi.AuthInfo) string {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["c"] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
	cfg.AuthInfos["u"] = user
	cfg.Contexts[ctx] = &clientcmdapi.Context{Cluster: "c", AuthInfo: "u", Namespace: "default"}
	cfg.CurrentContext = ctx
	path := filepath.Join(tb.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		tb.Fatal(err)
	}
	return path
}

// token returns the secret of seed: 32 distinct characters of
// [A-Za-z0-9], at least one of each kind.
func token(seed uint64) string {
	r := rand.New(rand.NewPCG(seed, 0x5ec12e7))
	shuffled := func(s string) []byte {
		b := []byte(s)
		r.Shuffle(len(b), func(i, j int) { b[i], b[j] = b[j], b[i] })
		return b
	}
	u := shuffled("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
	l := shuffled("abcdefghijklmnopqrstuvwxyz")
	d := shuffled("0123456789")
	rest := shuffled(string(u[1:]) + string(l[1:]) + string(d[1:]))
	t := append([]byte{u[0], l[0], d[0]}, rest[:29]...)
	r.Shuffle(len(t), func(i, j int) { t[i], t[j] = t[j], t[i] })
	return string(t)
}

// keep returns s limited to 12 bytes of printable ASCII (space included)
// for which ok is true.
func keep(s string, ok func(byte) bool) string {
	var b strings.Builder
	for i := 0; i < len(s) && b.Len() < 12; i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f && ok(c) {
			b.WriteByte(c)
		}
	}
	return b.String()
}

func without(chars string) func(byte) bool {
	return func(c byte) bool { return strings.IndexByte(chars, c) < 0 }
}

// build turns a fuzz input into a connection string holding the secret.
func (e *redactEnv) build(t *testing.T, form, variant, target uint8, seed uint64, pre, post, junk string) redactCase {
	fm := redactForms[int(form)%len(redactForms)]
	secret := token(seed)
	raw := variant&1 == 1
	op := keyOps[int(variant>>1)%len(keyOps)]
	if !strings.Contains(fm.tmpl, "{K:") {
		op = "="
	}
	noEquals := op == " " || op == ":" // the value follows the key name after a space or ':'

	var allowed func(byte) bool
	switch fm.enc {
	case encUserinfo:
		allowed = func(byte) bool { return true }
		if raw {
			allowed = without("/?# ")
		}
	case encRedisUser:
		allowed = without(":")
		if raw {
			allowed = without(":/?# ")
		}
	case encQuery:
		allowed = func(byte) bool { return true }
		if raw {
			allowed = without("&# ")
		}
	case encLibpq:
		allowed = func(byte) bool { return true }
		if raw {
			allowed = without(" '\\")
		}
	case encLibpqOpen:
		allowed = func(byte) bool { return true }
	case encADO:
		allowed = without(";")
	case encDSN:
		allowed = without("? ")
	default:
		allowed = func(byte) bool { return true }
	}
	if noEquals {
		// Nothing that reads as a second key=value pair, nor a space that
		// ends the token.
		allowedBefore := allowed
		allowed = func(c byte) bool { return allowedBefore(c) && c != ' ' && c != '=' }
	}
	v := keep(pre, allowed) + secret + keep(post, allowed)

	switch fm.enc {
	case encUserinfo:
		if !raw {
			ui := url.UserPassword("u", v).String()
			v = ui[len("u:"):]
		}
	case encRedisUser:
		if !raw {
			v = url.User(v).String()
		}
	case encQuery:
		if !raw {
			v = url.QueryEscape(v)
		}
	case encLibpq:
		if !raw && !noEquals {
			v = "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
		}
	case encLibpqOpen:
		v = "'" + v
	case encBare:
		v = secret + []string{"", "=", "==", ";"}[int(variant)%4]
	}

	c := redactCase{driver: fm.driver, secret: secret, what: fmt.Sprintf("form %d (%s), variant %d", int(form)%len(redactForms), fm.tmpl, variant)}
	if c.driver == "rediss" {
		c.driver = "redis"
	}
	if target > 0 {
		c.driver = redactDrivers[(int(target)-1)%len(redactDrivers)]
	}
	j := keep(junk, without(" ;&#"))
	r := strings.NewReplacer("{H}", "127.0.0.1:"+e.port, "{P}", e.port, "{D}", e.missing, "{J}", j)
	conn := r.Replace(fm.tmpl)
	if i := strings.Index(conn, "{K:"); i >= 0 {
		end := strings.Index(conn[i:], "}") + i
		conn = conn[:i] + keyName(conn[i+3:end], op, seed) + conn[end+1:]
	}
	c.conn = strings.Replace(conn, "{V}", v, 1)

	c.getter = kubeGetter(e.kubeconfig)
	switch fm.enc {
	case encKubeToken:
		c.getter = kubeGetter(e.writeKubeconfig(t, "helm", "https://127.0.0.1:"+e.port, &clientcmdapi.AuthInfo{Token: v}))
	case encKubePassword:
		c.getter = kubeGetter(e.writeKubeconfig(t, "helm", "https://127.0.0.1:"+e.port, &clientcmdapi.AuthInfo{Username: "helm", Password: v}))
	case encKubeServer:
		ui := url.UserPassword("u", v).String()
		c.getter = kubeGetter(e.writeKubeconfig(t, "helm", "https://"+ui+"@127.0.0.1:"+e.port, &clientcmdapi.AuthInfo{}))
	}
	return c
}

func kubeGetter(path string) genericclioptions.RESTClientGetter {
	g := genericclioptions.NewConfigFlags(false)
	g.KubeConfig = &path
	return g
}

// keyName writes a credential key name and what follows it as op says; a
// misspelling is one edit (a letter inserted, deleted, replaced, or two
// neighbours swapped) chosen by seed.
func keyName(name, op string, seed uint64) string {
	switch op {
	case "misspelt":
		r := rand.New(rand.NewPCG(seed, 0x7e11))
		b := []byte(name)
		i := r.IntN(len(b))
		letter := byte('a' + r.IntN(26))
		switch r.IntN(4) {
		case 0:
			b = append(b[:i], append([]byte{letter}, b[i:]...)...)
		case 1:
			b = append(b[:i], b[i+1:]...)
		case 2:
			b[i] = letter
		default:
			if i == len(b)-1 {
				i--
			}
			b[i], b[i+1] = b[i+1], b[i]
		}
		return string(b) + "="
	case "case":
		return strings.ToUpper(name[:1]) + strings.ToLower(name[1:]) + "="
	default:
		return name + op
	}
}

// check opens c (helm3.Open, and helm3.Init when Open fails) and fails
// if the secret appears in Redact's output, an error or a log line.
func (e *redactEnv) check(t *testing.T, c redactCase) {
	var logMu sync.Mutex
	var lines []string
	logf := func(format string, v ...interface{}) {
		logMu.Lock()
		defer logMu.Unlock()
		lines = append(lines, fmt.Sprintf(format, v...))
	}
	e.logs.take()
	leak := func(where, s string) {
		t.Helper()
		if leaked(s, c.secret) {
			t.Errorf("%s: the secret %s is in %s:\n%s\nconnection string (%s): %q", c.driver, c.secret, where, s, c.what, c.conn)
		}
	}
	leak("registry.Redact's output", registry.Redact(c.conn))
	if c.driver == "sqlite" {
		// A string sqlite reads as a relative path makes a file: here.
		t.Chdir(t.TempDir())
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := helm3.Open(ctx, c.driver, c.conn, helm3.WithTimeout(50*time.Millisecond), helm3.WithLog(logf), helm3.WithRESTClientGetter(c.getter), helm3.WithCacheBytes(0))
	if err == nil {
		s.Close()
	}
	for _, m := range errTexts(err) {
		leak("helm3.Open's error", m)
	}
	// helm3.Init opens the store as helm3.Open does, through the
	// environment, with DefaultTimeout as its deadline: it is called where
	// Open failed on the string itself, not where it reached for a server
	// that is not there (Init would only try that for longer).
	// (Open's 50 ms may also pass on a loaded machine before a SQLite
	// file is made and migrated: that, too, is not the string's fault.)
	if err != nil && !errors.Is(err, driver.ErrUnavailable) && !errors.Is(err, context.DeadlineExceeded) {
		openErr := err
		t.Setenv(driver.ConnectionStringEnv(c.driver), c.conn)
		err = helm3.Init(new(action.Configuration), c.getter, "default", c.driver, logf)
		if err == nil {
			t.Fatalf("helm3.Init opened what helm3.Open could not (%v): %q", openErr, c.conn)
		}
		for _, m := range errTexts(err) {
			leak("helm3.Init's error", m)
		}
	}
	logMu.Lock()
	for _, l := range lines {
		leak("a line of the store's log", l)
	}
	logMu.Unlock()
	leak("the process's log (log, klog)", e.logs.take())
}

// errTexts returns the text of err and of every error it wraps.
func errTexts(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		out = append(out, err.Error(), fmt.Sprintf("%+v", err))
		var oe *helm3.OpenError
		if errors.As(err, &oe) {
			out = append(out, oe.Conn)
		}
		switch u := err.(type) {
		case interface{ Unwrap() []error }:
			for _, e := range u.Unwrap() {
				walk(e)
			}
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		}
	}
	walk(err)
	return out
}

// leaked reports whether s holds secret or 12 consecutive characters of it,
// in any letter case.
func leaked(s, secret string) bool {
	s, secret = strings.ToLower(s), strings.ToLower(secret)
	for i := 0; i+12 <= len(secret); i++ {
		if strings.Contains(s, secret[i:i+12]) {
			return true
		}
	}
	return false
}
