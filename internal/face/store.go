package face

import (
	"context"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
)

// Store is a face's store over an engine view: the face's release type R in
// and out, and the face's Helm's sentinels in every error. Its zero value
// is not usable; New and Open make one.
type Store[R any] struct {
	v *engine.View[R]
	s *engine.Sentinels
}

// Helm is what a face gives: its Helm's codec and sentinels.
type Helm[R any] struct {
	Codec     engine.Codec[R]
	Sentinels *engine.Sentinels
}

// New returns a Store over b, a backend opened with cfg, scoped to
// engine.DefaultNamespace. Closing the Store closes b.
func New[R any](b driver.Backend, cfg *driver.Config, h Helm[R]) Store[R] {
	return Store[R]{v: engine.New(b, cfg, h.Codec), s: h.Sentinels}
}

// In returns a view of the same store scoped to ns ("" for all).
func (s Store[R]) In(ns string) Store[R] { return Store[R]{v: s.v.Namespace(ns), s: s.s} }

// Err returns err with the face's Helm's sentinel for the outcome it
// reports (engine.FaceError).
func (s Store[R]) Err(err error) error { return engine.FaceError(err, s.s) }

// EngineView returns the engine view under the store, for the module's own
// tests and benchmarks (engine.Of).
func (s Store[R]) EngineView() engine.Handle { return s.v }

// Name returns the registered name of the backend.
func (s Store[R]) Name() string { return s.v.Name() }

// Stats reports what the store holds in the view's namespace.
func (s Store[R]) Stats(ctx context.Context) (driver.Stats, error) {
	st, err := s.v.Stats(ctx)
	return st, s.Err(err)
}

// Summaries returns a page of the summary listing q selects.
func (s Store[R]) Summaries(ctx context.Context, q driver.SummaryQuery) (driver.SummaryPage, error) {
	p, err := s.v.Summaries(ctx, q)
	return p, s.Err(err)
}

// Close closes the backend (once, whichever view closes it).
func (s Store[R]) Close() error { return s.Err(s.v.Close()) }

// Collect removes the garbage of the view's namespace (Collect, the
// function).
func (s Store[R]) Collect(ctx context.Context) error { return s.Err(s.v.Collect(ctx)) }

// Garbage counts what Collect would remove.
func (s Store[R]) Garbage(ctx context.Context) (driver.Garbage, error) {
	g, err := s.v.Garbage(ctx)
	return g, s.Err(err)
}

// Verify reads every revision of the view's namespace as Get reads it,
// calling bad with each that cannot be read (Verify, the function).
func (s Store[R]) Verify(ctx context.Context, bad func(*driver.ReleaseError)) (int, error) {
	n, err := s.v.Verify(ctx, func(e *driver.ReleaseError) {
		if re, ok := s.Err(e).(*driver.ReleaseError); ok {
			e = re
		}
		bad(e)
	})
	return n, s.Err(err)
}

// Get returns the release stored under key.
func (s Store[R]) Get(key string) (*R, error) {
	r, err := s.v.Get(key)
	if err != nil {
		return nil, s.Err(err)
	}
	return r, nil
}

// List returns the releases of the view's namespace filter keeps.
func (s Store[R]) List(filter func(*R) bool) ([]*R, error) {
	rs, err := s.v.List(filter)
	return rs, s.Err(err)
}

// Query returns the releases whose labels match labels.
func (s Store[R]) Query(labels map[string]string) ([]*R, error) {
	rs, err := s.v.Query(labels)
	return rs, s.Err(err)
}

// Create stores rls under key.
func (s Store[R]) Create(key string, rls *R) error { return s.Err(s.v.Create(key, rls)) }

// Update replaces the release stored under key.
func (s Store[R]) Update(key string, rls *R) error { return s.Err(s.v.Update(key, rls)) }

// Delete removes the release stored under key and returns it.
func (s Store[R]) Delete(key string) (*R, error) {
	r, err := s.v.Delete(key)
	if err != nil {
		return nil, s.Err(err)
	}
	return r, nil
}
