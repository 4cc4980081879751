package driver

import (
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"
)

// DefaultCacheBytes is the default bound of a Store's decoded-part cache.
const DefaultCacheBytes = 64 << 20

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
	// Timeout bounds each Helm operation (0: no bound).
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

// WithTimeout bounds every Helm operation on the store.
func WithTimeout(d time.Duration) Option { return func(c *Config) { c.Timeout = d } }

// WithLog sets the debug logger.
func WithLog(log func(format string, v ...interface{})) Option {
	return func(c *Config) { c.Log = log }
}

// WithRESTClientGetter sets how Kubernetes backends reach the cluster.
func WithRESTClientGetter(g genericclioptions.RESTClientGetter) Option {
	return func(c *Config) { c.RESTClientGetter = g }
}

func newConfig(name, conn string, opts []Option) *Config {
	c := &Config{Name: name, ConnectionString: conn, CacheBytes: DefaultCacheBytes, Log: func(string, ...interface{}) {}}
	for _, o := range opts {
		o(c)
	}
	if c.Log == nil {
		c.Log = func(string, ...interface{}) {}
	}
	return c
}
