package cosmos

import (
	"slices"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/castest"
)

// harness opens each store on a new container of the test server; Reopen
// is a second client on the same container, Proxied one whose every
// connection goes through the suite's proxies (openProxied); Tamper edits
// its items; Wipe deletes them all.
func harness(base ...helm3.Option) drivertest.Harness {
	with := func(more []helm3.Option) []helm3.Option { return append(slices.Clone(base), more...) }
	var mu sync.Mutex
	conns := map[helm3.Store]string{}
	backends := map[helm3.Store]*cas.Backend{}
	open := func(t *testing.T, conn string, opts ...helm3.Option) helm3.Store {
		s, b := openTest(t, conn, options{}, opts...)
		mu.Lock()
		conns[s], backends[s] = conn, b
		mu.Unlock()
		return s
	}
	connOf := func(t *testing.T, what string, s helm3.Store) string {
		mu.Lock()
		conn, ok := conns[s]
		mu.Unlock()
		if !ok {
			t.Fatal(what + " of a store Open did not return")
		}
		return conn
	}
	backendOf := func(t *testing.T, what string, s helm3.Store) *cas.Backend {
		mu.Lock()
		b, ok := backends[s]
		mu.Unlock()
		if !ok {
			t.Fatal(what + " of a store Open did not return")
		}
		return b
	}
	return drivertest.Harness{
		Open: func(t *testing.T) helm3.Store { return open(t, connString(t), base...) },
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
	drivertest.Run(t, harness())
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
	var mu sync.Mutex
	conns := map[helm3.Store]string{}
	backends := map[helm3.Store]*cas.Backend{}
	open := func(t *testing.T, conn string, opts ...helm3.Option) helm3.Store {
		s, b := openTest(t, conn, options{}, opts...)
		mu.Lock()
		conns[s], backends[s] = conn, b
		mu.Unlock()
		return s
	}
	drivertest.RunAtRest(t, drivertest.AtRest{
		New: func(t *testing.T, opts ...helm3.Option) helm3.Store { return open(t, connString(t), opts...) },
		Again: func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			mu.Lock()
			conn := conns[s]
			mu.Unlock()
			return open(t, conn, opts...)
		},
		Holds: func(t *testing.T, s helm3.Store, secret []byte) bool {
			mu.Lock()
			b := backends[s]
			mu.Unlock()
			return itemsHold(t, b, secret)
		},
	})
}
