package helm3

import (
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/face"
	"github.com/helmstore/helmstore/internal/registry"
)

// DefaultCacheBytes is the default bound of a Store's decoded-part cache
// (driver.DefaultCacheBytes).
const DefaultCacheBytes = driver.DefaultCacheBytes

// DefaultTimeout bounds each operation of a store opened without
// WithTimeout (driver.DefaultTimeout).
const DefaultTimeout = driver.DefaultTimeout

// DefaultNamespace is the namespace of the Store that Open returns, as in
// Helm's own drivers. Use Store.Namespace for others.
const DefaultNamespace = engine.DefaultNamespace

// Option changes a Config before the store is opened.
type Option func(*driver.Config)

// WithCacheBytes bounds the decoded-part cache (0 disables it).
func WithCacheBytes(n int64) Option { return face.WithCacheBytes(n) }

// WithTimeout bounds every Helm operation on the store (the default is
// DefaultTimeout). WithTimeout(0), or a negative d, removes the bound: an
// operation then runs until it ends or its connection fails, however long
// that takes.
func WithTimeout(d time.Duration) Option { return face.WithTimeout(d) }

// WithLog sets the debug logger.
func WithLog(log func(format string, v ...interface{})) Option {
	return func(c *driver.Config) { c.Log = log }
}

// WithRESTClientGetter sets how Kubernetes backends reach the cluster.
func WithRESTClientGetter(g genericclioptions.RESTClientGetter) Option {
	return face.WithRESTClientGetter(g)
}

// WithEncryptionKeys switches on encryption at rest: every release's parts
// and head body are sealed under data keys wrapped by the key-encryption
// keys urls name (gocloud.dev/secrets keeper URLs: the first wraps new
// keys, the others only unwrap, for rotation; "namespace=URL" is a key
// for that namespace alone, package encryption). It overrides
// HELM_DRIVER_ENCRYPTION_KEYS, which NewConfig reads; no URLs switches it
// off. The program must import github.com/helmstore/helmstore/encryption
// and the keeper's package.
func WithEncryptionKeys(urls ...string) Option { return face.WithEncryptionKeys(urls...) }

// NewConfig returns the Config that Open gives the opener of driver name:
// connection string conn, a part cache of DefaultCacheBytes, a per-operation
// bound of DefaultTimeout and a Log that discards, then opts applied (a nil
// Log from WithLog discards too). A backend's own Open, which takes options
// without going through the registry (crsplit.Open, say), starts from it, so
// that its defaults are the registry's.
func NewConfig(name, conn string, opts ...Option) *driver.Config {
	fs := make([]func(*driver.Config), len(opts))
	for i, o := range opts {
		fs[i] = o
	}
	c := face.NewConfig(name, conn, fs...)
	if c.Log == nil {
		c.Log = func(string, ...interface{}) {}
	}
	return c
}

// Redact returns a connection string with its passwords, keys and tokens
// replaced, for logs and messages (registry.Redact): every form any backend
// takes, malformed ones included.
func Redact(conn string) string { return registry.Redact(conn) }
