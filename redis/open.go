package redis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"strings"

	goredis "github.com/redis/go-redis/v9"

	"github.com/helmstore/helmstore/driver"
)

// Name is the driver name the package registers.
const Name = "redis"

// DefaultPrefix starts every key the backend writes, unless the connection
// string's key_prefix says otherwise.
const DefaultPrefix = "helmstore"

func init() {
	driver.Register(Name, Open)
}

// Options the connection string carries for helmstore itself (go-redis
// refuses parameters it does not know, so these are taken out first).
const (
	// paramPrefix sets the key prefix (default DefaultPrefix).
	paramPrefix = "key_prefix"
	// paramAllowEviction=true opens a server whose maxmemory-policy may
	// evict keys (anything but noeviction), which is refused otherwise.
	paramAllowEviction = "allow_eviction"
	// paramCluster=true makes a single address a Cluster seed (several
	// addresses always mean a Cluster).
	paramCluster = "cluster"
	// paramMaster names the Sentinel master (go-redis's own name for it):
	// the addresses are then Sentinels.
	paramMaster = "master_name"
	// paramCAFile, paramCertFile and paramKeyFile name PEM files for
	// rediss://: the CA that signs the server's certificate (instead of
	// the system's), and a client certificate and key.
	paramCAFile   = "tls_ca_file"
	paramCertFile = "tls_cert_file"
	paramKeyFile  = "tls_key_file"
)

// dialerRetries is how many times go-redis dials before a command attempt
// fails, unless the connection string's dialer_retries says otherwise
// (go-redis's default is 5): go-redis already sends a failed command again
// (max_retries), so one dial per attempt is enough, and a host that does
// not answer costs one dial_timeout per attempt, not five. In Cluster this
// is also what a slot map reload pays for a dead node it asks first.
const dialerRetries = 1

// settings is what Open takes from the connection string besides go-redis's
// own options.
type settings struct {
	prefix        string
	allowEviction bool
}

// Open opens a Redis store (standalone, Sentinel or Cluster) from
// cfg.ConnectionString; see the package documentation for its forms.
func Open(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
	return open(ctx, cfg, nil)
}

// open is Open, dialling mapAddr(addr) for every address addr the client
// dials, when mapAddr is not nil.
func open(ctx context.Context, cfg *driver.Config, mapAddr func(string) string) (driver.Backend, error) {
	sink := newLogSink(cfg.Log)
	c, set, err := newClient(cfg.ConnectionString, mapAddr, sink)
	if err != nil {
		sink.close()
		return nil, err
	}
	b := newBackend(c, set.prefix, cfg.Log)
	b.recordTTL = recordTTL(cfg.Timeout)
	b.sink = sink
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	if err := b.check(ctx, set.allowEviction); err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// newClient parses a connection string into a go-redis client: a Sentinel
// failover client when master_name is given, a Cluster client for several
// addresses (host:port,host:port or addr= parameters) or cluster=true, a
// plain client otherwise. With mapAddr, every connection goes to
// mapAddr(addr) instead of addr. The client dials through storeDialer and
// has sinkHook, so that go-redis's lines about its dial errors and its
// operations go to sink.
func newClient(conn string, mapAddr func(string) string, sink *logSink) (goredis.UniversalClient, settings, error) {
	set := settings{prefix: DefaultPrefix}
	if conn == "" {
		return nil, set, fmt.Errorf("no connection string: set %s to a redis:// or rediss:// URL", driver.ConnectionStringEnv(Name))
	}
	u, err := url.Parse(conn)
	if err != nil {
		return nil, set, fmt.Errorf("connection string is not a URL: %w", scrubURLError(err))
	}
	if u.Scheme != "redis" && u.Scheme != "rediss" {
		return nil, set, fmt.Errorf("connection string scheme %q: want redis:// or rediss://", u.Scheme)
	}
	if u.User != nil {
		// redis://secret@host: a userinfo without ':' is a password, as
		// redis-cli reads it (go-redis would take it for an ACL user
		// name and send no password). An ACL user without a password is
		// redis://user:@host.
		if _, has := u.User.Password(); !has && u.User.Username() != "" {
			u.User = url.UserPassword("", u.User.Username())
		}
	}
	q := u.Query()
	if v, ok := q[paramPrefix]; ok {
		set.prefix = v[len(v)-1]
		if !validPrefix(set.prefix) {
			return nil, set, fmt.Errorf("%s %q: a key prefix must not be empty or contain { or }", paramPrefix, set.prefix)
		}
	}
	if set.allowEviction, err = boolParam(q, paramAllowEviction); err != nil {
		return nil, set, err
	}
	cluster, err := boolParam(q, paramCluster)
	if err != nil {
		return nil, set, err
	}
	tlsFiles := [3]string{q.Get(paramCAFile), q.Get(paramCertFile), q.Get(paramKeyFile)}
	for _, p := range []string{paramPrefix, paramAllowEviction, paramCluster, paramCAFile, paramCertFile, paramKeyFile} {
		q.Del(p)
	}
	if tlsFiles != [3]string{} && u.Scheme != "rediss" {
		return nil, set, fmt.Errorf("%s, %s and %s need a rediss:// URL", paramCAFile, paramCertFile, paramKeyFile)
	}
	hosts := strings.Split(u.Host, ",")
	for _, h := range hosts {
		if h == "" {
			return nil, set, errors.New("connection string has an empty address")
		}
	}
	master := q.Get(paramMaster)
	several := len(hosts) > 1 || len(q["addr"]) > 0
	if several || master != "" || cluster {
		u.Host = hosts[0]
		for _, h := range hosts[1:] {
			q.Add("addr", h)
		}
	}
	u.RawQuery = q.Encode()
	switch {
	case master != "":
		o, err := goredis.ParseFailoverURL(u.String())
		if err != nil {
			return nil, set, fmt.Errorf("connection string: %w", scrubURLError(err))
		}
		o.ContextTimeoutEnabled = true
		if err := addTLSFiles(o.TLSConfig, tlsFiles); err != nil {
			return nil, set, err
		}
		if o.DialerRetries == 0 {
			o.DialerRetries = dialerRetries
		}
		o.Dialer = storeDialer(o.DialTimeout, o.TLSConfig, mapAddr, sink)
		return hooked(goredis.NewFailoverClient(o), sink), set, nil
	case several || cluster:
		o, err := goredis.ParseClusterURL(u.String())
		if err != nil {
			return nil, set, fmt.Errorf("connection string: %w", scrubURLError(err))
		}
		o.ContextTimeoutEnabled = true
		if err := addTLSFiles(o.TLSConfig, tlsFiles); err != nil {
			return nil, set, err
		}
		if o.DialerRetries == 0 {
			o.DialerRetries = dialerRetries
		}
		o.Dialer = storeDialer(o.DialTimeout, o.TLSConfig, mapAddr, sink)
		return hooked(goredis.NewClusterClient(o), sink), set, nil
	default:
		o, err := goredis.ParseURL(u.String())
		if err != nil {
			return nil, set, fmt.Errorf("connection string: %w", scrubURLError(err))
		}
		o.ContextTimeoutEnabled = true
		if err := addTLSFiles(o.TLSConfig, tlsFiles); err != nil {
			return nil, set, err
		}
		if o.DialerRetries == 0 {
			o.DialerRetries = dialerRetries
		}
		o.Dialer = storeDialer(o.DialTimeout, o.TLSConfig, mapAddr, sink)
		return hooked(goredis.NewClient(o), sink), set, nil
	}
}

// hooked adds sinkHook to c.
func hooked(c goredis.UniversalClient, sink *logSink) goredis.UniversalClient {
	c.AddHook(sinkHook{sink: sink})
	return c
}

// addTLSFiles loads the CA and client certificate files (ca, cert, key;
// "" for none) into c.
func addTLSFiles(c *tls.Config, files [3]string) error {
	ca, cert, key := files[0], files[1], files[2]
	if c == nil || files == [3]string{} {
		return nil
	}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return fmt.Errorf("%s: %w", paramCAFile, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("%s %s holds no PEM certificate", paramCAFile, ca)
		}
		c.RootCAs = pool
	}
	if (cert == "") != (key == "") {
		return fmt.Errorf("%s and %s go together", paramCertFile, paramKeyFile)
	}
	if cert != "" {
		kp, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return fmt.Errorf("client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{kp}
	}
	return nil
}

func boolParam(q url.Values, name string) (bool, error) {
	v, ok := q[name]
	if !ok {
		return false, nil
	}
	b, err := strconv.ParseBool(v[len(v)-1])
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false", name, v[len(v)-1])
	}
	return b, nil
}

// scrubURLError returns go-redis's parse error without the URL (url.Error
// quotes it, password and all).
func scrubURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
