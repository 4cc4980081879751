package cosmos

import (
	"slices"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// harness opens each store on a new container of the test server; Reopen
// is a second client on the same container, Proxied one whose every
// connection goes through the suite's proxies (openProxied); Tamper edits
// its items; Wipe deletes them all.
func harness(base ...helm3.Option) drivertest.Harness {
	with := func(more []helm3.Option) []helm3.Option { return append(slices.Clone(base), more...) }
	var o opened
	open, connOf, backendOf := o.open, o.conn, o.backend
	return drivertest.Harness{
		Parallel: true, // every store is on a container of its own
		Open:     func(t *testing.T) helm3.Store { return open(t, connString(t), base...) },
		Reopen: func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			return open(t, connOf(t, "Reopen", s), with(opts)...)
		},
		Proxied: func(t *testing.T, s helm3.Store, proxy drivertest.ProxyFunc, opts ...helm3.Option) (helm3.Store, error) {
			return openProxied(t, connOf(t, "Proxied", s), proxy, true, with(opts)...)
		},
		Tamper: func(t *testing.T, s helm3.Store) drivertest.Tamperer {
			b := backendOf(t, "Tamper", s)
			return castest.WithEmbedded(newTamperer(b), castest.ObjectStore(b))
		},
		Wipe: func(t *testing.T, s helm3.Store) { wipe(t, backendOf(t, "Wipe", s)) },
	}
}

// TestConformance runs the whole drivertest suite on the Cosmos DB test
// server (32 MiB release included), then checks the size of every item it
// wrote against Cosmos DB's 2 MB limit.
func TestConformance(t *testing.T) {
	// The suite's tests run in parallel: t.Run returns once they all have.
	t.Run("Suite", func(t *testing.T) { drivertest.Run(t, harness()) })
	checkSizes(t)
}

// TestConformanceEncrypted runs the whole suite with encryption at rest on.
func TestConformanceEncrypted(t *testing.T) {
	drivertest.Run(t, harness(helm3.WithEncryptionKeys(drivertest.KeyURL(t))))
}

// TestEncryptedAtRest scans every item of a store's container, each
// string of its JSON as it is and base64-decoded (how []byte fields are
// stored) (drivertest.RunAtRest).
func TestEncryptedAtRest(t *testing.T) {
	var o opened
	drivertest.RunAtRest(t, drivertest.AtRest{
		New: func(t *testing.T, opts ...helm3.Option) helm3.Store { return o.open(t, connString(t), opts...) },
		Again: func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			return o.open(t, o.conn(t, "Again", s), opts...)
		},
		Holds: func(t *testing.T, s helm3.Store, secret []byte) bool {
			return itemsHold(t, o.backend(t, "Holds", s), secret)
		},
	})
}

// opened remembers the connection string and backend of each store a
// harness opened (open), for the harness's other functions.
type opened struct {
	mu     sync.Mutex
	stores map[helm3.Store]openedStore
}

type openedStore struct {
	conn string
	b    *cas.Backend
}

// open opens a store on conn (openTest) and remembers it.
func (o *opened) open(t *testing.T, conn string, opts ...helm3.Option) helm3.Store {
	s, b := openTest(t, conn, options{}, opts...)
	o.mu.Lock()
	if o.stores == nil {
		o.stores = map[helm3.Store]openedStore{}
	}
	o.stores[s] = openedStore{conn, b}
	o.mu.Unlock()
	return s
}

// get is what open remembered of s; what names the caller.
func (o *opened) get(t *testing.T, what string, s helm3.Store) openedStore {
	o.mu.Lock()
	st, ok := o.stores[s]
	o.mu.Unlock()
	if !ok {
		t.Fatal(what + " of a store Open did not return")
	}
	return st
}

// conn is the connection string s was opened on.
func (o *opened) conn(t *testing.T, what string, s helm3.Store) string { return o.get(t, what, s).conn }

// backend is the backend under s.
func (o *opened) backend(t *testing.T, what string, s helm3.Store) *cas.Backend {
	return o.get(t, what, s).b
}
