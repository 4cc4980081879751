package helm4

import (
	"context"

	rspb "helm.sh/helm/v4/pkg/release/v1"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/face"
	"github.com/helmstore/helmstore/internal/helm4codec"
	"github.com/helmstore/helmstore/internal/registry"
)

// Open opens the backend registered as name with the given connection string.
// It opens helmstore's backends only; Helm's own driver names (secret,
// configmap, memory, sql) go through Init.
// The returned Store is scoped to DefaultNamespace; use Namespace for others.
// Errors never contain the connection string's password.
func Open(ctx context.Context, name, connectionString string, opts ...Option) (Store, error) {
	cfg := NewConfig(name, connectionString, opts...)
	fs, err := face.Open(ctx, cfg, helm4)
	if err != nil {
		return nil, err
	}
	_, sw := withSwap(cfg)
	return &store{Store: fs, log: sw}, nil
}

// OpenError reports a store that could not be opened (registry.OpenError).
type OpenError = registry.OpenError

// New returns a Store over b, a backend opened directly with cfg (a
// provider's Open, with a Config from NewConfig), scoped to
// DefaultNamespace. Closing the Store closes b.
func New(b driver.Backend, cfg *driver.Config) Store {
	cfg, sw := withSwap(cfg)
	return &store{Store: face.New(b, cfg, helm4), log: sw}
}

// helm4 is this face's Helm: Helm 4's release codec and sentinels.
var helm4 = face.Helm[rspb.Release]{Codec: helm4codec.Codec{}, Sentinels: &engine.Sentinels{
	NotFound:   helmdriver.ErrReleaseNotFound,
	Exists:     helmdriver.ErrReleaseExists,
	InvalidKey: helmdriver.ErrInvalidKey,
}}
