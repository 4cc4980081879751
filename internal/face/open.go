package face

import (
	"context"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/registry"
)

// Open opens the backend registered as cfg.Name with cfg (encrypting at
// rest as cfg.EncryptionKeys say) and returns a Store over it. Errors never
// contain the connection string's password.
func Open[R any](ctx context.Context, cfg *driver.Config, h Helm[R]) (Store[R], error) {
	b, err := registry.Open(ctx, cfg)
	if err != nil {
		return Store[R]{}, err
	}
	if b, err = registry.Encrypt(ctx, b, cfg); err != nil {
		return Store[R]{}, &registry.OpenError{Driver: cfg.Name, Conn: registry.Redact(cfg.ConnectionString), Err: err}
	}
	return New(b, cfg, h), nil
}

// NewConfig returns the Config of driver name with connection string conn:
// a part cache of driver.DefaultCacheBytes, a per-operation bound of
// driver.DefaultTimeout, the encryption keys HELM_DRIVER_ENCRYPTION_KEYS
// lists, then opts applied.
func NewConfig(name, conn string, opts ...func(*driver.Config)) *driver.Config {
	c := &driver.Config{Name: name, ConnectionString: conn, CacheBytes: driver.DefaultCacheBytes, Timeout: driver.DefaultTimeout,
		EncryptionKeys: registry.EncryptionKeysFromEnv()}
	for _, o := range opts {
		o(c)
	}
	return c
}

// The options both faces take (each face's With... returns one as its own
// Option type).

// WithCacheBytes bounds the decoded-part cache (0 disables it).
func WithCacheBytes(n int64) func(*driver.Config) { return func(c *driver.Config) { c.CacheBytes = n } }

// WithTimeout bounds every operation (0 or less: no bound).
func WithTimeout(d time.Duration) func(*driver.Config) {
	return func(c *driver.Config) { c.Timeout = max(d, 0) }
}

// WithRESTClientGetter sets how Kubernetes backends reach the cluster (a
// genericclioptions.RESTClientGetter, held as any).
func WithRESTClientGetter(g any) func(*driver.Config) {
	return func(c *driver.Config) { c.RESTClientGetter = g }
}

// WithEncryptionKeys sets the key-encryption key URLs (none: no
// encryption), overriding HELM_DRIVER_ENCRYPTION_KEYS.
func WithEncryptionKeys(urls ...string) func(*driver.Config) {
	return func(c *driver.Config) { c.EncryptionKeys = urls }
}
