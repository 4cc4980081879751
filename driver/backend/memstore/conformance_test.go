package memstore_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend/memstore"
	"github.com/helmstore/helmstore/driver/drivertest"
)

// harness opens each store on a space of its own, Reopens it by the same
// name (another store, with its own part cache, on the same data) and
// tampers with it through memstore.Tamper.
func harness(opts ...driver.Option) drivertest.Harness {
	var n atomic.Int64
	var mu sync.Mutex
	names := map[driver.Store]string{}
	open := func(t *testing.T, name string, opts ...driver.Option) driver.Store {
		s, err := driver.Open(context.Background(), memstore.Name, name, opts...)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		names[s] = name
		mu.Unlock()
		return s
	}
	return drivertest.Harness{
		Open: func(t *testing.T) driver.Store {
			return open(t, fmt.Sprintf("conformance-%d", n.Add(1)), opts...)
		},
		Reopen: func(t *testing.T, s driver.Store, more ...driver.Option) driver.Store {
			mu.Lock()
			name, ok := names[s]
			mu.Unlock()
			if !ok {
				t.Fatal("Reopen of a store Open did not return")
			}
			return open(t, name, append(append([]driver.Option{}, opts...), more...)...)
		},
		Tamper: memstore.Tamper,
		Wipe:   memstore.Wipe,
	}
}

func TestConformance(t *testing.T) {
	drivertest.Run(t, harness())
}

// Without a part cache every read decodes its parts for itself, and the
// engine lends their bytes to the releases it builds: the suite again
// (NoAliasing fails if memstore handed out its stored bytes).
func TestConformanceNoCache(t *testing.T) {
	drivertest.Run(t, harness(driver.WithCacheBytes(0)))
}
