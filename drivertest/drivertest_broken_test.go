package drivertest_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
	_ "github.com/helmstore/helmstore/sql" // sqlite and postgres, under the broken wrappers
)

// brokenEnv, in a child process of TestBrokenBackendsFail, names the broken
// store the child runs drivertest against.
const brokenEnv = "HELMSTORE_DRIVERTEST_BROKEN"

// TestBrokenBackendsFail shows that drivertest fails a backend that breaks
// helmstore's semantics: each case runs the relevant checks against a
// deliberately broken store in a child test process, and asserts that the
// child failed, in the check expected, with its message. The "sound" case
// runs the same checks on the same store unbroken and asserts they pass, so
// the failures come from the breakage.
func TestBrokenBackendsFail(t *testing.T) {
	if which := os.Getenv(brokenEnv); which != "" {
		// The child: run the suite (narrowed by -test.run) on the store.
		drivertest.Run(t, brokenHarness(which))
		return
	}
	// Each case is a child process over stores of its own.
	t.Parallel()
	for _, c := range []struct {
		broken, run string
		failed      string // the failing test, "" when the run must pass
		msg         string
	}{
		{"sound", "LastWriterWins/StaleUpdate", "", ""},
		{"sound", "ReservedLabels", "", ""},
		{"conflict-on-stale", "LastWriterWins/StaleUpdate", "LastWriterWins/StaleUpdate/TwoStores",
			"want success (last writer wins)"},
		{"accepts-reserved", "ReservedLabels", "ReservedLabels/Create",
			`with the reserved label "helmstore.io/x" succeeded; want it refused`},
		{"accepts-reserved", "ReservedLabels", "ReservedLabels/Update",
			`with the reserved label "helmstore.io/x" succeeded; want it refused`},
		{"sound", "DataLoss", "", ""},
		{"forgets-namespaces", "DataLoss", "DataLoss",
			"round 1: the store that wrote: List of all namespaces after the wipe: 0 releases"},
		{"sound-postgres", "LostReply", "", ""},
		{"retries-writes", "LostReply", "LostReply/Create", "already exists; want nil or helm3.ErrUnavailable"},
		{"retries-writes", "LostReply", "LostReply/Delete", "not found; want nil or helm3.ErrUnavailable"},
	} {
		name := c.failed
		if name == "" {
			name = c.run
		}
		t.Run(c.broken+"/"+name, func(t *testing.T) {
			t.Parallel()
			if c.broken == "sound-postgres" || c.broken == "retries-writes" {
				sqlenv.PostgresServer(t) // skipped, or failed, here rather than in the child
			}
			// The broken stores wrap Helm 3's face: the Helm3 run.
			pattern := "^TestBrokenBackendsFail$/^Helm3$"
			for _, part := range strings.Split(c.run, "/") {
				pattern += "/^" + part + "$"
			}
			cmd := exec.Command(os.Args[0], "-test.run", pattern, "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), brokenEnv+"="+c.broken)
			out, err := cmd.CombinedOutput()
			if c.failed == "" {
				if err != nil || !strings.Contains(string(out), "--- PASS: TestBrokenBackendsFail/Helm3/"+c.run) {
					t.Fatalf("drivertest's %s failed on the sound store: %v\n%s", c.run, err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("drivertest's %s passed on the %s store; want it to fail\n%s", c.run, c.broken, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenBackendsFail/Helm3/"+c.failed+" ") || !strings.Contains(string(out), c.msg) {
				t.Fatalf("on the %s store, want %s to fail with %q; the run said:\n%s", c.broken, c.failed, c.msg, out)
			}
		})
	}
}

// brokenHarness returns a harness over SQLite stores wrapped as which
// names: "sound" (unchanged), "conflict-on-stale" (an Update from a stale
// read fails with ErrConflict), "accepts-reserved" (reserved labels are
// accepted, and dropped) or "forgets-namespaces" (all-namespaces reads see
// only the namespaces a store registered once); or over PostgreSQL stores
// (brokenPostgres).
func brokenHarness(which string) drivertest.Harness {
	switch which {
	case "sound-postgres", "retries-writes":
		return brokenPostgres(which)
	}
	var regMu sync.Mutex
	registries := map[string]*registry{} // by SQLite file
	registryOf := func(path string) *registry {
		regMu.Lock()
		defer regMu.Unlock()
		r := registries[path]
		if r == nil {
			r = &registry{set: map[string]bool{}}
			registries[path] = r
		}
		return r
	}
	wrap := func(s helm3.Store, path string, v *versions) helm3.Store {
		switch which {
		case "sound":
			return &wrapped{Store: s, path: path}
		case "conflict-on-stale":
			return &staleConflicts{wrapped: wrapped{Store: s, path: path}, v: v, read: map[string]int{}}
		case "accepts-reserved":
			return &acceptsReserved{wrapped: wrapped{Store: s, path: path}}
		case "forgets-namespaces":
			return &forgetsNamespaces{wrapped: wrapped{Store: s, path: path}, reg: registryOf(path), memo: new(sync.Map), ns: helm3.DefaultNamespace}
		}
		panic("unknown broken store " + which)
	}
	open := func(t *testing.T, path string, opts ...helm3.Option) helm3.Store {
		s, err := helm3.Open(context.Background(), "sqlite", path, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return drivertest.Harness{
		Open: func(t *testing.T) helm3.Store {
			path := filepath.Join(t.TempDir(), "h.db")
			return wrap(open(t, path), path, &versions{n: map[string]int{}})
		},
		Reopen: func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			w := s.(interface{ base() *wrapped })
			var v *versions
			if sc, ok := s.(*staleConflicts); ok {
				v = sc.v
			}
			return wrap(open(t, w.base().path, opts...), w.base().path, v)
		},
		Wipe: func(t *testing.T, s helm3.Store) {
			w := s.(interface{ base() *wrapped })
			sqltest.Wipe(t, w.base().Store)
			registryOf(w.base().path).clear()
		},
	}
}

// brokenPostgres returns a harness over PostgreSQL stores, for the tests
// that need a network (Harness.Proxied): "sound-postgres" (unchanged) or
// "retries-writes" (a write that failed with ErrUnavailable is sent again
// at once, as a client library that resends a command whose reply it lost
// does).
func brokenPostgres(which string) drivertest.Harness {
	h := sqltest.Harness("postgres", sqlenv.Postgres)
	wrap := func(s helm3.Store) helm3.Store {
		if which == "retries-writes" {
			return &retriesWrites{wrapped: wrapped{Store: s}}
		}
		return &wrapped{Store: s}
	}
	unwrap := func(s helm3.Store) helm3.Store { return s.(interface{ base() *wrapped }).base().Store }
	return drivertest.Harness{
		Open: func(t *testing.T) helm3.Store {
			sqlenv.PostgresServer(t)
			return wrap(h.Open(t))
		},
		Reopen: func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			return wrap(h.Reopen(t, unwrap(s), opts...))
		},
		Proxied: func(t *testing.T, s helm3.Store, proxy drivertest.ProxyFunc, opts ...helm3.Option) (helm3.Store, error) {
			ps, err := h.Proxied(t, unwrap(s), proxy, opts...)
			if err != nil {
				return nil, err
			}
			return wrap(ps), nil
		},
	}
}

// wrapped is a store unchanged; path is its SQLite file, for Reopen.
type wrapped struct {
	helm3.Store
	path string
}

func (w *wrapped) base() *wrapped { return w }

// versions counts the writes of each key: the revision token a store that
// detects stale Updates would keep, shared by every store over the data.
type versions struct {
	mu sync.Mutex
	n  map[string]int
}

// staleConflicts is broken: it fails an Update of a release written since
// this store read it with ErrConflict, where helmstore's semantics say the
// last writer wins.
type staleConflicts struct {
	wrapped
	v    *versions
	mu   sync.Mutex
	read map[string]int // the version of each key this store last read
}

func (s *staleConflicts) Get(key string) (*release.Release, error) {
	s.v.mu.Lock()
	n := s.v.n[key]
	s.v.mu.Unlock()
	r, err := s.Store.Get(key)
	if err == nil {
		s.mu.Lock()
		s.read[key] = n
		s.mu.Unlock()
	}
	return r, err
}

func (s *staleConflicts) Update(key string, r *release.Release) error {
	s.v.mu.Lock()
	defer s.v.mu.Unlock()
	s.mu.Lock()
	seen, ok := s.read[key]
	s.mu.Unlock()
	if ok && seen != s.v.n[key] {
		return &helm3.ReleaseError{Op: "update", Key: key, Err: fmt.Errorf("%w: changed since it was read", helm3.ErrConflict)}
	}
	if err := s.Store.Update(key, r); err != nil {
		return err
	}
	s.v.n[key]++
	s.mu.Lock()
	s.read[key] = s.v.n[key]
	s.mu.Unlock()
	return nil
}

// acceptsReserved is broken: it takes custom labels under helmstore.io/
// (and drops them) where every store must refuse them.
type acceptsReserved struct{ wrapped }

func withoutReserved(r *release.Release) *release.Release {
	c := *r
	c.Labels = maps.Clone(r.Labels)
	for k := range c.Labels {
		if strings.HasPrefix(k, "helmstore.io/") {
			delete(c.Labels, k)
		}
	}
	return &c
}

func (s *acceptsReserved) Create(key string, r *release.Release) error {
	return s.Store.Create(key, withoutReserved(r))
}

func (s *acceptsReserved) Update(key string, r *release.Release) error {
	return s.Store.Update(key, withoutReserved(r))
}

// registry is the set of namespaces a store that keeps one records, shared
// by every store over the data (as a Redis set of namespaces is).
type registry struct {
	mu  sync.Mutex
	set map[string]bool
}

func (r *registry) add(ns string) { r.mu.Lock(); r.set[ns] = true; r.mu.Unlock() }

func (r *registry) has(ns string) bool { r.mu.Lock(); defer r.mu.Unlock(); return r.set[ns] }

func (r *registry) clear() { r.mu.Lock(); r.set = map[string]bool{}; r.mu.Unlock() }

// forgetsNamespaces is broken as issue 22's Redis store was: it registers a
// namespace once per store (its views share the memo) and reads across
// namespaces only those registered, so after the data is lost its later
// writes to a namespace it registered before are invisible to every
// all-namespaces read.
type forgetsNamespaces struct {
	wrapped
	reg  *registry
	memo *sync.Map // namespaces this store registered
	ns   string    // the view's namespace
}

func (s *forgetsNamespaces) Namespace(ns string) helm3.Store {
	return &forgetsNamespaces{wrapped: wrapped{Store: s.Store.Namespace(ns), path: s.path}, reg: s.reg, memo: s.memo, ns: ns}
}

func (s *forgetsNamespaces) wrote(r *release.Release, err error) error {
	if err == nil {
		ns := r.Namespace
		if ns == "" {
			ns = s.ns
		}
		if _, seen := s.memo.LoadOrStore(ns, true); !seen {
			s.reg.add(ns)
		}
	}
	return err
}

func (s *forgetsNamespaces) Create(key string, r *release.Release) error {
	return s.wrote(r, s.Store.Create(key, r))
}

func (s *forgetsNamespaces) Update(key string, r *release.Release) error {
	return s.wrote(r, s.Store.Update(key, r))
}

// registered keeps, for an all-namespaces view, the releases of registered
// namespaces.
func (s *forgetsNamespaces) registered(rs []*release.Release) []*release.Release {
	if s.ns != "" {
		return rs
	}
	var out []*release.Release
	for _, r := range rs {
		if s.reg.has(r.Namespace) {
			out = append(out, r)
		}
	}
	return out
}

func (s *forgetsNamespaces) List(filter func(*release.Release) bool) ([]*release.Release, error) {
	rs, err := s.Store.List(filter)
	return s.registered(rs), err
}

func (s *forgetsNamespaces) Query(labels map[string]string) ([]*release.Release, error) {
	rs, err := s.Store.Query(labels)
	if rs = s.registered(rs); err == nil && len(rs) == 0 {
		return nil, helm3.ErrReleaseNotFound
	}
	return rs, err
}

func (s *forgetsNamespaces) Get(key string) (*release.Release, error) {
	r, err := s.Store.Get(key)
	if err == nil && len(s.registered([]*release.Release{r})) == 0 {
		return nil, helm3.ErrReleaseNotFound
	}
	return r, err
}

// retriesWrites is broken as go-redis made issue 22's Redis store: a write
// whose reply was lost is sent again, and the second run answers for a
// state the first one made.
type retriesWrites struct{ wrapped }

func (s *retriesWrites) Create(key string, r *release.Release) error {
	err := s.Store.Create(key, r)
	if errors.Is(err, helm3.ErrUnavailable) {
		err = s.Store.Create(key, r)
	}
	return err
}

func (s *retriesWrites) Update(key string, r *release.Release) error {
	err := s.Store.Update(key, r)
	if errors.Is(err, helm3.ErrUnavailable) {
		err = s.Store.Update(key, r)
	}
	return err
}

func (s *retriesWrites) Delete(key string) (*release.Release, error) {
	r, err := s.Store.Delete(key)
	if errors.Is(err, helm3.ErrUnavailable) {
		r, err = s.Store.Delete(key)
	}
	return r, err
}
