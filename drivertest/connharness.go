package drivertest

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/helm3"
)

// openConn opens the registered driver name at conn (helm3.Open), failing
// t if it cannot.
func openConn(t testing.TB, name, conn string, opts ...helm3.Option) helm3.Store {
	t.Helper()
	s, err := helm3.Open(context.Background(), name, conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// RewriteAddrs returns the connection string conn with every network
// address ("host:port") a store opened on it would dial replaced by
// proxy(address), or an error if conn names an address it cannot map.
type RewriteAddrs func(conn string, proxy ProxyFunc) (string, error)

// ConnectionStrings describes a backend that is opened by connection
// string, for Harness.
type ConnectionStrings struct {
	// Name is the registered driver name.
	Name string
	// New returns the connection string of a new, empty store (a
	// database, a key prefix of its own).
	New func(t testing.TB) string
	// Rewrite, if set, maps the addresses of a connection string, for
	// Harness.Proxied.
	Rewrite RewriteAddrs
	// Deny, if set, returns a connection string over the same data as
	// conn whose credentials or rights the service refuses, for
	// Harness.Denied.
	Deny func(t *testing.T, conn string) string
	// Confine, if set, returns a connection string over the same data as
	// conn whose credentials the service confines to namespaces, for
	// Harness.Confined.
	Confine func(t *testing.T, conn string, namespaces ...string) string
	// Options are applied to the stores Open opens (Reopen, Proxied and
	// Denied apply their own).
	Options []helm3.Option
}

// Harness returns a Harness whose Open opens a store on c.New's connection
// string and whose Reopen opens the same string again (its own connections,
// opts applied), with Proxied, Denied and Confined set where c says how. Tamper and
// Wipe are left to the caller. Its stores are independent (each on a new
// store of c.New), so Run runs its tests in parallel (Harness.Parallel).
func (c ConnectionStrings) Harness() Harness {
	var mu sync.Mutex
	conns := map[helm3.Store]string{}
	connOf := func(t *testing.T, s helm3.Store) string {
		mu.Lock()
		cs, ok := conns[s]
		mu.Unlock()
		if !ok {
			t.Fatal("a store Open did not return")
		}
		return cs
	}
	h := Harness{
		Parallel: true,
		Open: func(t *testing.T) helm3.Store {
			cs := c.New(t)
			s := openConn(t, c.Name, cs, c.Options...)
			mu.Lock()
			conns[s] = cs
			mu.Unlock()
			return s
		},
		Reopen: func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			return openConn(t, c.Name, connOf(t, s), append(slices.Clone(c.Options), opts...)...)
		},
	}
	if c.Rewrite != nil {
		h.Proxied = func(t *testing.T, s helm3.Store, proxy ProxyFunc, opts ...helm3.Option) (helm3.Store, error) {
			cs, err := c.Rewrite(connOf(t, s), proxy)
			if err != nil {
				t.Fatalf("map the addresses of the connection string: %v", err)
			}
			return helm3.Open(context.Background(), c.Name, cs, append(slices.Clone(c.Options), opts...)...)
		}
	}
	if c.Deny != nil {
		h.Denied = func(t *testing.T, s helm3.Store, opts ...helm3.Option) (helm3.Store, error) {
			return helm3.Open(context.Background(), c.Name, c.Deny(t, connOf(t, s)), append(slices.Clone(c.Options), opts...)...)
		}
	}
	if c.Confine != nil {
		h.Confined = func(t *testing.T, s helm3.Store, namespaces ...string) (helm3.Store, error) {
			return helm3.Open(context.Background(), c.Name, c.Confine(t, connOf(t, s), namespaces...), c.Options...)
		}
	}
	return h
}
