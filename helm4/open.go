package helm4

import (
	"context"

	rspb "helm.sh/helm/v4/pkg/release/v1"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/helm4codec"
)

// Open opens the backend registered as name with the given connection string.
// It opens helmstore's backends only; Helm's own driver names (secret,
// configmap, memory, sql) go through Init.
// The returned Store is scoped to DefaultNamespace; use Namespace for others.
// Errors never contain the connection string's password.
func Open(ctx context.Context, name, connectionString string, opts ...Option) (Store, error) {
	cfg := NewConfig(name, connectionString, opts...)
	b, err := driver.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if b, err = driver.Encrypt(ctx, b, cfg); err != nil {
		return nil, &OpenError{Driver: name, Conn: driver.Redact(connectionString), Err: err}
	}
	return New(b, cfg), nil
}

// OpenError reports a store that could not be opened (driver.OpenError).
type OpenError = driver.OpenError

// New returns a Store over b, a backend opened directly with cfg (a
// provider's Open, with a Config from NewConfig), scoped to
// DefaultNamespace. Closing the Store closes b.
func New(b driver.Backend, cfg *driver.Config) Store {
	cfg, sw := withSwap(cfg)
	return &store{v: engine.New[rspb.Release](b, cfg, helm4codec.Codec{}), log: sw}
}
