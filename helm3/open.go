package helm3

import (
	"context"

	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/face"
	"github.com/helmstore/helmstore/internal/helm3codec"
	"github.com/helmstore/helmstore/internal/registry"
)

// Open opens the backend registered as name with the given connection string.
// It opens helmstore's backends only; Helm's own driver names (secret,
// configmap, memory, sql) go through Init.
// The returned Store is scoped to DefaultNamespace; use Namespace for others.
// Errors never contain the connection string's password.
func Open(ctx context.Context, name, connectionString string, opts ...Option) (Store, error) {
	fs, err := face.Open(ctx, NewConfig(name, connectionString, opts...), helm3)
	if err != nil {
		return nil, err
	}
	return store{fs}, nil
}

// OpenError reports a store that could not be opened (registry.OpenError).
type OpenError = registry.OpenError

// New returns a Store over b, a backend opened directly with cfg (a
// provider's Open, with a Config from NewConfig), scoped to
// DefaultNamespace. Closing the Store closes b.
func New(b driver.Backend, cfg *driver.Config) Store {
	return store{face.New(b, cfg, helm3)}
}

// helm3 is this face's Helm: Helm 3's release codec and sentinels.
var helm3 = face.Helm[release.Release]{Codec: helm3codec.Codec{}, Sentinels: &engine.Sentinels{
	NotFound:   helmdriver.ErrReleaseNotFound,
	Exists:     helmdriver.ErrReleaseExists,
	InvalidKey: helmdriver.ErrInvalidKey,
}}

// store is the Helm 3 face of an engine view: face.Store over Helm 3's
// release type, whose methods are Helm 3's driver interface.
type store struct{ face.Store[release.Release] }

var (
	_ Store     = store{}
	_ Collector = store{}
	_ Verifier  = store{}
)

func (s store) Namespace(ns string) Store { return store{s.In(ns)} }
