package helm3

import (
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// DefaultCacheBytes is the default bound of a Store's decoded-part cache.
const DefaultCacheBytes = 64 << 20

// DefaultTimeout bounds each operation of a store opened without
// WithTimeout: long enough for any Helm command on a healthy backend (a
// List of thousands of releases, a Create of a chart near Helm's size
// limits), short enough that a command facing a dead or blackholed server
// fails instead of hanging. Backends also derive server-side bounds from it
// (PostgreSQL's statement_timeout), so a statement never outlives the
// operation that sent it.
const DefaultTimeout = 2 * time.Minute

// DefaultNamespace is the namespace of the Store that Open returns, as in
// Helm's own drivers. Use Store.Namespace for others.
const DefaultNamespace = "default"

// Config is everything an Opener gets: what Open was called with, after
// options are applied. Backends read what concerns them.
type Config struct {
	// Name is the driver name the store was opened by ("postgres", ...).
	Name string
	// ConnectionString is the backend's connection string (a URL, DSN or
	// file path). It may hold a password: never log it; use Redact.
	ConnectionString string
	// CacheBytes bounds the decoded-part cache; 0 disables it.
	CacheBytes int64
	// Timeout bounds each Helm operation (0: no bound). It is
	// DefaultTimeout unless WithTimeout says otherwise.
	Timeout time.Duration
	// Log receives debug messages (Helm's DebugLog signature).
	Log func(format string, v ...interface{})
	// RESTClientGetter is how Kubernetes backends reach the cluster (the
	// same getter Helm uses: kubeconfig, context and namespace flags).
	RESTClientGetter genericclioptions.RESTClientGetter
}

// Option changes a Config before the store is opened.
type Option func(*Config)

// WithCacheBytes bounds the decoded-part cache (0 disables it).
func WithCacheBytes(n int64) Option { return func(c *Config) { c.CacheBytes = n } }

// WithTimeout bounds every Helm operation on the store (the default is
// DefaultTimeout). WithTimeout(0), or a negative d, removes the bound: an
// operation then runs until it ends or its connection fails, however long
// that takes.
func WithTimeout(d time.Duration) Option {
	return func(c *Config) { c.Timeout = max(d, 0) }
}

// WithLog sets the debug logger.
func WithLog(log func(format string, v ...interface{})) Option {
	return func(c *Config) { c.Log = log }
}

// WithRESTClientGetter sets how Kubernetes backends reach the cluster.
func WithRESTClientGetter(g genericclioptions.RESTClientGetter) Option {
	return func(c *Config) { c.RESTClientGetter = g }
}

// NewConfig returns the Config that Open gives the opener of driver name:
// connection string conn, a part cache of DefaultCacheBytes, a per-operation
// bound of DefaultTimeout and a Log that discards, then opts applied (a nil
// Log from WithLog discards too). A backend's own Open, which takes options
// without going through the registry (crsplit.Open, say), starts from it, so
// that its defaults are the registry's.
func NewConfig(name, conn string, opts ...Option) *Config {
	c := &Config{Name: name, ConnectionString: conn, CacheBytes: DefaultCacheBytes, Timeout: DefaultTimeout}
	for _, o := range opts {
		o(c)
	}
	if c.Log == nil {
		c.Log = func(string, ...interface{}) {}
	}
	return c
}
