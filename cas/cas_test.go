package cas_test

import (
	"sync"
	"testing"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
)

// small makes every size path of the protocol run on small releases:
// chunked parts and chunked head bodies.
var small = cas.Config{InlinePartBytes: 512, InlineBodyBytes: 2 << 10, ChunkBytes: 4 << 10}

func harness(wrap func(*memStore) cas.ObjectStore) drivertest.Harness {
	var mu sync.Mutex
	stores := map[helm3.Store]*memStore{}
	get := func(s helm3.Store) *memStore { mu.Lock(); defer mu.Unlock(); return stores[s] }
	open := func(m *memStore, opts ...helm3.Option) helm3.Store {
		cfg := &driver.Config{Name: "cas-test", CacheBytes: helm3.DefaultCacheBytes, Timeout: helm3.DefaultTimeout}
		for _, o := range opts {
			o(cfg)
		}
		s := helm3.New(cas.New(wrap(m), small), cfg)
		mu.Lock()
		stores[s] = m
		mu.Unlock()
		return s
	}
	return drivertest.Harness{
		Open:              func(t *testing.T) helm3.Store { return open(newMemStore()) },
		Reopen:            func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store { return open(get(s), opts...) },
		LargeReleaseBytes: 4 << 20,
		Ops:               1000,
	}
}

// TestConformance runs the conformance suite on the protocol over a store
// that adds referrers atomically, as Kubernetes and Cosmos DB do.
func TestConformance(t *testing.T) {
	drivertest.Run(t, harness(func(m *memStore) cas.ObjectStore { return adderStore{m} }))
}

// TestConformanceCompareAndSwap runs it over a store with only the five
// core operations: referrers are added by compare-and-swap.
func TestConformanceCompareAndSwap(t *testing.T) {
	drivertest.Run(t, harness(func(m *memStore) cas.ObjectStore { return m }))
}
