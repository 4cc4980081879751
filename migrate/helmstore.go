package migrate

import (
	"context"

	rspb "helm.sh/helm/v4/pkg/release/v1"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm4"
)

// storeOf is a helmstore store, through its Helm 4 face, listed by its
// summary listing (heads only).
type storeOf struct {
	name string
	s    helm4.Store
}

// FromStore returns the Store of a helmstore store opened by the caller
// (with helm4.Open), under the HELM_DRIVER name it was opened with.
// Closing the returned Store closes s.
func FromStore(name string, s helm4.Store) Store { return &storeOf{name: name, s: s} }

// Helmstore returns the helmstore store s moves releases of (its Helm 4
// face, as FromStore or Open opened it), and false for one of Helm's own
// drivers. Closing s closes it.
func Helmstore(s Store) (helm4.Store, bool) {
	o, ok := s.(*storeOf)
	if !ok {
		return nil, false
	}
	return o.s, true
}

func (s *storeOf) Name() string { return s.name }

func (s *storeOf) Revisions(ctx context.Context, ns, name string) ([]Revision, error) {
	q := driver.SummaryQuery{AllRevisions: true, NamePrefix: name, Limit: 1000}
	var out []Revision
	for {
		p, err := s.s.Namespace(ns).Summaries(ctx, q)
		if err != nil {
			return nil, err
		}
		for _, e := range p.Summaries {
			if name == "" || e.Name == name {
				out = append(out, Revision{Namespace: e.StorageNamespace, Name: e.Name, Version: e.Revision, Status: e.Status})
			}
		}
		if p.NextPageToken == "" {
			return out, nil
		}
		q.PageToken = p.NextPageToken
	}
}

func (s *storeOf) Get(_ context.Context, r Revision) (*rspb.Release, error) {
	rel, err := s.s.Namespace(r.Namespace).Get(r.Key())
	if err != nil {
		return nil, err
	}
	return v1(rel)
}

func (s *storeOf) Create(_ context.Context, ns string, rls *rspb.Release) error {
	return s.s.Namespace(ns).Create(revisionIn(ns, rls).Key(), rls)
}

func (s *storeOf) Update(_ context.Context, ns string, rls *rspb.Release) error {
	return s.s.Namespace(ns).Update(revisionIn(ns, rls).Key(), rls)
}

func (s *storeOf) Delete(_ context.Context, r Revision) error {
	_, err := s.s.Namespace(r.Namespace).Delete(r.Key())
	return err
}

// Stats is what the store holds in namespace ns ("": all).
func (s *storeOf) Stats(ctx context.Context, ns string) (driver.Stats, error) {
	return s.s.Namespace(ns).Stats(ctx)
}

// StoredBytes is what the store holds in namespace ns ("": all), as
// stored: heads and parts, shared parts counted once.
func (s *storeOf) StoredBytes(ctx context.Context, ns string) (int64, error) {
	st, err := s.Stats(ctx, ns)
	return st.StoredBytes(), err
}

// Collect removes the garbage of namespace ns ("": all).
func (s *storeOf) Collect(ctx context.Context, ns string) error {
	return helm4.Collect(ctx, s.s.Namespace(ns))
}

// Garbage reports what Collect would remove from namespace ns ("": all),
// removing nothing.
func (s *storeOf) Garbage(ctx context.Context, ns string) (driver.Garbage, error) {
	return helm4.GarbageOf(ctx, s.s.Namespace(ns))
}

func (s *storeOf) Close() error { return s.s.Close() }

// Verify reads every revision of namespace ns ("": all) as Get reads it
// and calls bad with each that cannot be read (helm4.Verify).
func (s *storeOf) Verify(ctx context.Context, ns string, bad func(*helm4.ReleaseError)) (int, error) {
	return helm4.Verify(ctx, s.s.Namespace(ns), bad)
}
