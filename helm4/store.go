package helm4

import (
	"context"
	"fmt"
	"log/slog"

	"helm.sh/helm/v4/pkg/release"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/face"
)

// Store is a Helm 4 storage driver over one helmstore backend. It owns the
// backend's connection pool; views returned by Namespace share it.
//
// Its methods take and return release.Releaser values holding Helm 4's v1
// releases (helm.sh/helm/v4/pkg/release/v1): a *v1.Release or a v1.Release
// is accepted, as Helm's own drivers accept both, and *v1.Release is
// returned. Anything else is refused with an error.
type Store interface {
	helmdriver.Driver

	// Namespace returns a view of the same store scoped to ns. The empty
	// namespace means all namespaces for List and Query (as in Helm); Get,
	// Update and Delete in such a view find the key in whichever namespace
	// holds it. Views are cheap: an operator serving 500 namespaces opens
	// one Store and takes 500 views.
	Namespace(ns string) Store

	// Stats reports what the store holds in this view's namespace (all
	// namespaces for the "" view).
	Stats(ctx context.Context) (Stats, error)

	// Summaries returns a page of the summary listing q selects in this
	// view's namespace (all namespaces for the "" view): what helm list
	// prints and a dashboard shows of each release (or each revision),
	// read from the store's index of heads alone, with no chart, values
	// or manifest read or decoded: the listing to call where List would
	// build every release only to show its name and status. Entries come
	// by namespace, name and revision; SummaryQuery.Limit and PageToken
	// page through them. A revision whose stored head cannot be read is
	// skipped, as List skips it.
	Summaries(ctx context.Context, q SummaryQuery) (SummaryPage, error)

	// Close releases the pool. Closing any view closes the store.
	Close() error

	// Logger returns the store's logger, and SetLogger replaces its
	// handler, for every view of the store: what Helm 4's storage.Init
	// asks of a driver.
	Logger() *slog.Logger
	SetLogger(h slog.Handler)
}

// Stats describes what a store holds (driver.Stats).
type Stats = driver.Stats

// SummaryQuery selects a summary listing (driver.SummaryQuery).
type SummaryQuery = driver.SummaryQuery

// SummaryPage is one page of a summary listing (driver.SummaryPage).
type SummaryPage = driver.SummaryPage

// Summary is one revision of a summary listing (driver.Summary).
type Summary = driver.Summary

// store is the Helm 4 face of an engine view: face.Store over Helm 4's v1
// release, taking and returning Helm 4's Releaser where Helm 4's driver
// interface does.
type store struct {
	face.Store[rspb.Release]
	log *swapHandler // shared by every view and the backend
}

var (
	_ Store     = (*store)(nil)
	_ Collector = (*store)(nil)
	_ Verifier  = (*store)(nil)
)

func (s *store) Namespace(ns string) Store { return &store{Store: s.In(ns), log: s.log} }

func (s *store) Logger() *slog.Logger     { return s.log.logger }
func (s *store) SetLogger(h slog.Handler) { s.log.set(h) }

func (s *store) Get(key string) (release.Releaser, error) {
	r, err := s.Store.Get(key)
	if err != nil {
		return nil, err
	}
	return r, nil
}

func (s *store) List(filter func(release.Releaser) bool) ([]release.Releaser, error) {
	var f func(*rspb.Release) bool
	if filter != nil {
		f = func(r *rspb.Release) bool { return filter(r) }
	}
	rs, err := s.Store.List(f)
	return releasers(rs), err
}

func (s *store) Query(labels map[string]string) ([]release.Releaser, error) {
	rs, err := s.Store.Query(labels)
	return releasers(rs), err
}

func (s *store) Create(key string, rls release.Releaser) error {
	r, err := v1Release("create", key, rls)
	if err != nil {
		return err
	}
	return s.Store.Create(key, r)
}

func (s *store) Update(key string, rls release.Releaser) error {
	r, err := v1Release("update", key, rls)
	if err != nil {
		return err
	}
	return s.Store.Update(key, r)
}

func (s *store) Delete(key string) (release.Releaser, error) {
	r, err := s.Store.Delete(key)
	if err != nil {
		return nil, err
	}
	return r, nil
}

// v1Release returns the v1 release rls holds: a *v1.Release as it is, a
// v1.Release as a pointer to a copy (so a caller's value is never written
// to). Anything else, nil included, is an error naming the type.
func v1Release(op, key string, rls release.Releaser) (*rspb.Release, error) {
	switch r := rls.(type) {
	case *rspb.Release:
		if r != nil {
			return r, nil
		}
	case rspb.Release:
		return &r, nil
	}
	return nil, &driver.ReleaseError{Op: op, Key: key, Err: fmt.Errorf("%w: a Helm 4 store keeps v1 releases (*v1.Release), not %T", ErrUnsupportedRelease, rls)}
}

// releasers returns rs as Releasers, nil for nil, as Helm's drivers return
// an empty list.
func releasers(rs []*rspb.Release) []release.Releaser {
	if rs == nil {
		return nil
	}
	out := make([]release.Releaser, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}
