package benchmarks

import (
	"context"
	"testing"

	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	helm4driver "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/helm4"
)

// An Opener opens the backend of a new, empty helmstore store for one run
// of a benchmark, with cfg: the Config the face's NewConfig gives (its part
// cache off for a cold run), in which the Opener sets what its backend
// needs (Name, ConnectionString or RESTClientGetter) before opening it
// (registry.Open, or a provider's own Open). The store closes the backend.
type Opener func(b *testing.B, cfg *driver.Config) driver.Backend

// StoreTarget is a helmstore store as a benchmark target named name, cold
// and warm for the reads: each run opens a new store (OpenStore).
func StoreTarget(name string, open Opener) Target {
	return Target{Name: name, ColdWarm: true, Open: func(b *testing.B, f Face, cache bool) Store {
		return OpenStore(b, f, cache, open)
	}}
}

// OpenStore opens a store for one run through face f, with its part cache
// on or off: the backend open returns, with the Config of f's own
// NewConfig, under f's New, as a Helm 3 or Helm 4 tool opens it; closed
// when the run ends. B/rev is the growth of the store's Stats (heads and
// parts). The listing benchmarks list through new stores over the same
// backend, as new processes would (Bench.ActionList).
func OpenStore(b *testing.B, f Face, cache bool, open Opener) Store {
	var st Store
	var stats func(context.Context) (driver.Stats, error)
	if f == Helm4 {
		var opts []helm4.Option
		if !cache {
			opts = append(opts, helm4.WithCacheBytes(0))
		}
		cfg := helm4.NewConfig("", "", opts...)
		be := open(b, cfg)
		st.fresh = freshOver(be, cfg)
		s := helm4.New(be, cfg)
		b.Cleanup(func() { s.Close() })
		st.View4 = func(ns string) helm4driver.Driver { return s.Namespace(ns) }
		stats = s.Namespace("").Stats
	} else {
		var opts []helm3.Option
		if !cache {
			opts = append(opts, helm3.WithCacheBytes(0))
		}
		cfg := helm3.NewConfig("", "", opts...)
		be := open(b, cfg)
		st.fresh = freshOver(be, cfg)
		s := helm3.New(be, cfg)
		b.Cleanup(func() { s.Close() })
		st.View = func(ns string) helmdriver.Driver { return s.Namespace(ns) }
		stats = s.Namespace("").Stats
	}
	st.Stored = func() int64 {
		s, err := stats(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		return s.StoredBytes()
	}
	return st
}
