package cosmos

import (
	"context"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/cosmosenv"
)

// cosmosItemLimit is Cosmos DB's item limit (2 MB of UTF-8 JSON), which the
// test server does not enforce: the tests measure every item written.
const cosmosItemLimit = 2 << 20

// sizes records the largest item JSON written, per kind, by every store
// the tests open.
type sizes struct {
	mu    sync.Mutex
	max   map[cas.Kind]int
	count int
}

var itemSizes = &sizes{max: map[cas.Kind]int{}}

func (s *sizes) observe(k cas.Kind, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count++
	if n > s.max[k] {
		s.max[k] = n
	}
}

func (s *sizes) snapshot() (map[cas.Kind]int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[cas.Kind]int{}
	for k, v := range s.max {
		out[k] = v
	}
	return out, s.count
}

// checkSizes fails t if any item written so far was over the limit.
func checkSizes(t *testing.T) {
	t.Helper()
	max, n := itemSizes.snapshot()
	for k, v := range max {
		t.Logf("largest %s item: %d bytes of JSON (%d items written in all)", kindName(k), v, n)
		if v > cosmosItemLimit {
			t.Errorf("a %s item of %d bytes was written: over Cosmos DB's %d-byte limit", kindName(k), v, cosmosItemLimit)
		}
	}
}

// connString returns a connection string for a new container of the test
// server.
func connString(t testing.TB) string {
	endpoint := cosmosenv.Endpoint(t)
	return "AccountEndpoint=" + endpoint + "/;AccountKey=" + cosmosenv.Key + ";Database=helmstore-test;Container=" +
		testenv.UniqueName("c") + ";InsecureSkipVerify=true;AllowWeakConsistency=true;"
}

// openTest opens a store on conn with o, closed when t ends.
func openTest(t testing.TB, conn string, o options, opts ...helm3.Option) (helm3.Store, *cas.Backend) {
	t.Helper()
	s, b, err := tryOpen(conn, o, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

// tryOpen opens a store on conn with o as openTest does, returning Open's
// error.
func tryOpen(conn string, o options, opts ...helm3.Option) (helm3.Store, *cas.Backend, error) {
	cfg := &driver.Config{Name: Name, ConnectionString: conn, CacheBytes: helm3.DefaultCacheBytes, Timeout: helm3.DefaultTimeout}
	for _, opt := range opts {
		opt(cfg)
	}
	if o.observe == nil {
		o.observe = itemSizes.observe
	}
	cb, err := open(context.Background(), cfg, o)
	if err != nil {
		return nil, nil, err
	}
	return helm3.New(cb, cfg), cb, nil
}
