package helm3

import (
	"context"

	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/helm3codec"
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
	return &store{v: engine.New(b, cfg, helm3codec.Codec{})}
}

// store is the Helm 3 face of an engine view: Helm 3's release type in and
// out, Helm 3's sentinels in every error.
type store struct{ v *engine.View[release.Release] }

var (
	_ Store     = (*store)(nil)
	_ Collector = (*store)(nil)
)

// EngineView returns the engine view under the store, for the module's own
// tests and benchmarks (package engine is internal: no one else can use it).
func (s *store) EngineView() engine.Handle { return s.v }

func (s *store) Name() string              { return s.v.Name() }
func (s *store) Namespace(ns string) Store { return &store{v: s.v.Namespace(ns)} }
func (s *store) Stats(ctx context.Context) (Stats, error) {
	st, err := s.v.Stats(ctx)
	return st, helmErr(err)
}
func (s *store) Summaries(ctx context.Context, q SummaryQuery) (SummaryPage, error) {
	p, err := s.v.Summaries(ctx, q)
	return p, helmErr(err)
}
func (s *store) Close() error                      { return helmErr(s.v.Close()) }
func (s *store) Collect(ctx context.Context) error { return helmErr(s.v.Collect(ctx)) }
func (s *store) Garbage(ctx context.Context) (Garbage, error) {
	g, err := s.v.Garbage(ctx)
	return g, helmErr(err)
}

func (s *store) Get(key string) (*release.Release, error) {
	r, err := s.v.Get(key)
	return r, helmErr(err)
}

func (s *store) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	rs, err := s.v.List(filter)
	return rs, helmErr(err)
}

func (s *store) Query(labels map[string]string) ([]*release.Release, error) {
	rs, err := s.v.Query(labels)
	return rs, helmErr(err)
}

func (s *store) Create(key string, rls *release.Release) error { return helmErr(s.v.Create(key, rls)) }
func (s *store) Update(key string, rls *release.Release) error { return helmErr(s.v.Update(key, rls)) }

func (s *store) Delete(key string) (*release.Release, error) {
	r, err := s.v.Delete(key)
	return r, helmErr(err)
}

// sentinels are Helm 3's own values for the outcomes Helm's drivers report.
var sentinels = &engine.Sentinels{
	NotFound:   helmdriver.ErrReleaseNotFound,
	Exists:     helmdriver.ErrReleaseExists,
	InvalidKey: helmdriver.ErrInvalidKey,
}

// helmErr returns err with Helm 3's sentinel for the outcome it reports
// (engine.FaceError).
func helmErr(err error) error { return engine.FaceError(err, sentinels) }
