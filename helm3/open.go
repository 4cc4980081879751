package helm3

import (
	"context"
	"errors"

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
func (s *store) Close() error                      { return helmErr(s.v.Close()) }
func (s *store) Collect(ctx context.Context) error { return helmErr(s.v.Collect(ctx)) }

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

// sentinels maps the backend interface's outcomes to Helm 3's own values.
var sentinels = [...]struct{ ours, helms error }{
	{driver.ErrReleaseNotFound, helmdriver.ErrReleaseNotFound},
	{driver.ErrReleaseExists, helmdriver.ErrReleaseExists},
	{driver.ErrInvalidKey, helmdriver.ErrInvalidKey},
}

// helmErr returns err with Helm 3's sentinel for the outcome it reports: a
// bare sentinel (Query's "no release matches") as Helm's bare value, as
// Helm's drivers return it; a wrapped one so that errors.Is matches both
// Helm's value and package driver's, with the same text.
func helmErr(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range sentinels {
		if err == s.ours {
			return s.helms
		}
	}
	var re *driver.ReleaseError
	if !errors.As(err, &re) {
		return err
	}
	for _, s := range sentinels {
		if errors.Is(re.Err, s.ours) {
			out := *re
			out.Err = &sentinelError{helm: s.helms, err: re.Err}
			return &out
		}
	}
	return err
}

// sentinelError is an error of package driver's that reports an outcome
// Helm has a sentinel for: its text is the error's own, and it matches both.
type sentinelError struct{ helm, err error }

func (e *sentinelError) Error() string   { return e.err.Error() }
func (e *sentinelError) Unwrap() []error { return []error{e.helm, e.err} }
