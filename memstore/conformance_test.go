package memstore_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"gocloud.dev/secrets/localsecrets"

	"github.com/helmstore/helmstore/drivertest"
	_ "github.com/helmstore/helmstore/encryption"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/memstore"
)

// spaces numbers the spaces of every harness (the tests run in parallel).
var spaces atomic.Int64

// harness opens each store on a space of its own, Reopens it by the same
// name (another store, with its own part cache, on the same data) and
// tampers with it through memstore.Tamper.
func harness(opts ...helm3.Option) drivertest.Harness {
	var mu sync.Mutex
	names := map[helm3.Store]string{}
	open := func(t *testing.T, name string, opts ...helm3.Option) helm3.Store {
		s, err := helm3.Open(context.Background(), memstore.Name, name, opts...)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		names[s] = name
		mu.Unlock()
		return s
	}
	return drivertest.Harness{
		Open: func(t *testing.T) helm3.Store {
			return open(t, fmt.Sprintf("conformance-%d", spaces.Add(1)), opts...)
		},
		Reopen: func(t *testing.T, s helm3.Store, more ...helm3.Option) helm3.Store {
			mu.Lock()
			name, ok := names[s]
			mu.Unlock()
			if !ok {
				t.Fatal("Reopen of a store Open did not return")
			}
			return open(t, name, append(append([]helm3.Option{}, opts...), more...)...)
		},
		Tamper:   memstore.Tamper,
		Wipe:     memstore.Wipe,
		Parallel: true, // every store is on a space of its own
	}
}

func TestConformance(t *testing.T) {
	t.Parallel()
	drivertest.Run(t, harness())
}

// Without a part cache every read decodes its parts for itself, and the
// engine lends their bytes to the releases it builds: the suite again
// (NoAliasing fails if memstore handed out its stored bytes).
func TestConformanceNoCache(t *testing.T) {
	t.Parallel()
	drivertest.Run(t, harness(helm3.WithCacheBytes(0)))
}

// The suite on stores encrypting at rest (package encryption, a local
// key-encryption key).
func TestConformanceEncrypted(t *testing.T) {
	t.Parallel()
	k, err := localsecrets.NewRandomKey()
	if err != nil {
		t.Fatal(err)
	}
	drivertest.Run(t, harness(helm3.WithEncryptionKeys("base64key://"+base64.URLEncoding.EncodeToString(k[:]))))
}
