package drivertest_test

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/drivertest"
	_ "github.com/helmstore/helmstore/sql" // sqlite, under the broken wrappers
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
	} {
		name := c.failed
		if name == "" {
			name = c.run
		}
		t.Run(c.broken+"/"+name, func(t *testing.T) {
			pattern := "^TestBrokenBackendsFail$"
			for _, part := range strings.Split(c.run, "/") {
				pattern += "/^" + part + "$"
			}
			cmd := exec.Command(os.Args[0], "-test.run", pattern, "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), brokenEnv+"="+c.broken)
			out, err := cmd.CombinedOutput()
			if c.failed == "" {
				if err != nil || !strings.Contains(string(out), "--- PASS: TestBrokenBackendsFail/"+c.run) {
					t.Fatalf("drivertest's %s failed on the sound store: %v\n%s", c.run, err, out)
				}
				return
			}
			if err == nil {
				t.Fatalf("drivertest's %s passed on the %s store; want it to fail\n%s", c.run, c.broken, out)
			}
			if !strings.Contains(string(out), "--- FAIL: TestBrokenBackendsFail/"+c.failed+" ") || !strings.Contains(string(out), c.msg) {
				t.Fatalf("on the %s store, want %s to fail with %q; the run said:\n%s", c.broken, c.failed, c.msg, out)
			}
		})
	}
}

// brokenHarness returns a harness over SQLite stores wrapped as which
// names: "sound" (unchanged), "conflict-on-stale" (an Update from a stale
// read fails with ErrConflict) or "accepts-reserved" (reserved labels are
// accepted, and dropped).
func brokenHarness(which string) drivertest.Harness {
	wrap := func(s driver.Store, path string, v *versions) driver.Store {
		switch which {
		case "sound":
			return &wrapped{Store: s, path: path}
		case "conflict-on-stale":
			return &staleConflicts{wrapped: wrapped{Store: s, path: path}, v: v, read: map[string]int{}}
		case "accepts-reserved":
			return &acceptsReserved{wrapped: wrapped{Store: s, path: path}}
		}
		panic("unknown broken store " + which)
	}
	open := func(t *testing.T, path string, opts ...driver.Option) driver.Store {
		s, err := driver.Open(context.Background(), "sqlite", path, opts...)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	return drivertest.Harness{
		Open: func(t *testing.T) driver.Store {
			path := filepath.Join(t.TempDir(), "h.db")
			return wrap(open(t, path), path, &versions{n: map[string]int{}})
		},
		Reopen: func(t *testing.T, s driver.Store, opts ...driver.Option) driver.Store {
			w := s.(interface{ base() *wrapped })
			var v *versions
			if sc, ok := s.(*staleConflicts); ok {
				v = sc.v
			}
			return wrap(open(t, w.base().path, opts...), w.base().path, v)
		},
	}
}

// wrapped is a store unchanged; path is its SQLite file, for Reopen.
type wrapped struct {
	driver.Store
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
		return &driver.ReleaseError{Op: "update", Key: key, Err: fmt.Errorf("%w: changed since it was read", driver.ErrConflict)}
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
