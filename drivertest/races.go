package drivertest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// reopen returns a second store over the data of s, as another process
// would open it.
func (h Harness) reopen(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
	t.Helper()
	if h.Reopen == nil {
		t.Skip("Harness.Reopen is not set: the driver cannot be checked with several stores over one set of data")
	}
	r := h.Reopen(t, s, opts...)
	t.Cleanup(func() { r.Close() })
	return r
}

// readers runs read on n goroutines until stop is closed, and at least once
// each; it returns the first error any reported.
func readers(n int, stop <-chan struct{}, read func(id int) error) error {
	var wg sync.WaitGroup
	var first atomic.Value
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(id int) {
			defer wg.Done()
			for {
				if err := read(id); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
				select {
				case <-stop:
					return
				default:
				}
			}
		}(i)
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return nil
}

// failOn fails t with the writer's error, if it sent one, or the readers'.
func failOn(t *testing.T, werr <-chan error, rerr error) {
	t.Helper()
	select {
	case err := <-werr:
		t.Fatalf("writer: %v", err)
	default:
	}
	if rerr != nil {
		t.Fatal(rerr)
	}
}

func testRaces(t *testing.T, h Harness) {
	// An all-namespaces List must never lose a release that exists
	// throughout, while a release sharing its parts in another namespace is
	// created and deleted. Readers with no part cache (a new process) and
	// the writer's own store both read.
	t.Run("AllNamespacesListDuringChurn", func(t *testing.T) {
		s := h.open(t)
		// Same chart and values as the churning release; "team-a" sorts
		// first, so a reader that takes the churning copy of a shared part
		// for the stable release's is caught when that copy goes.
		keep := rel("keep", "team-b", 1, release.StatusDeployed)
		mustCreate(t, s.Namespace("team-b"), keep)
		cold := h.reopen(t, s, helm3.WithCacheBytes(0))
		stop := make(chan struct{})
		werr := make(chan error, 1)
		go func() {
			defer close(stop)
			a := s.Namespace("team-a")
			for i := 0; i < 40; i++ {
				if err := a.Create(key("churn", 1), rel("churn", "team-a", 1, release.StatusDeployed)); err != nil {
					werr <- err
					return
				}
				if _, err := a.Delete(key("churn", 1)); err != nil {
					werr <- err
					return
				}
			}
		}()
		err := readers(4, stop, func(id int) error {
			st := cold
			if id == 0 {
				st = s
			}
			rs, err := st.Namespace("").List(func(*release.Release) bool { return true })
			if err != nil {
				return fmt.Errorf("reader %d: list: %w", id, err)
			}
			found := false
			for _, r := range rs {
				switch {
				case r.Namespace == "team-b" && r.Name == "keep":
					found = true
					if r.Chart == nil || r.Config == nil || r.Manifest != keep.Manifest {
						return fmt.Errorf("reader %d: partial or wrong release %s", id, brief(r))
					}
				case r.Namespace == "team-a" && r.Name == "churn":
				default:
					return fmt.Errorf("reader %d: list returned %s/%s", id, r.Namespace, r.Name)
				}
			}
			if !found {
				return fmt.Errorf("reader %d: all-namespaces list lost team-b/keep (got %s)", id, joinKeys(rs))
			}
			return nil
		})
		failOn(t, werr, err)
	})

	// Helm's Deployed(name) is Query{name, owner, status: deployed}: racing
	// the writes of upgrades, it may find nothing for a moment, but never a
	// release whose status is not deployed.
	t.Run("QueryRacingUpdate", func(t *testing.T) {
		s := h.open(t)
		mustCreate(t, s, rel("web", "default", 1, release.StatusDeployed))
		cold := h.reopen(t, s, helm3.WithCacheBytes(0))
		warm := h.reopen(t, s)
		stop := make(chan struct{})
		werr := make(chan error, 1)
		go func() {
			defer close(stop)
			// Each superseded revision is also rewritten with other values
			// and manifest, so the parts a racing reader found for it are
			// gone and it must read the revision again.
			for v := 2; v <= 31; v++ {
				if err := s.Create(key("web", v), rel("web", "default", v, release.StatusDeployed)); err != nil {
					werr <- err
					return
				}
				old := rel("web", "default", v-1, release.StatusSuperseded)
				old.Config = map[string]interface{}{"superseded": true}
				old.Manifest += "# superseded\n"
				if err := s.Update(key("web", v-1), old); err != nil {
					werr <- err
					return
				}
			}
		}()
		err := readers(6, stop, func(id int) error {
			st := []helm3.Store{s, cold, warm}[id%3]
			for _, status := range []release.Status{release.StatusDeployed, release.StatusSuperseded} {
				rs, err := st.Query(map[string]string{"name": "web", "owner": "helm", "status": status.String()})
				if errors.Is(err, helm3.ErrReleaseNotFound) {
					continue
				}
				if err != nil {
					return fmt.Errorf("reader %d: query %s: %w", id, status, err)
				}
				for _, r := range rs {
					if r.Info.Status != status || r.Labels["status"] != status.String() || r.Name != "web" {
						return fmt.Errorf("reader %d: query status=%s returned %s v%d with status %s (label %q)", id, status, r.Name, r.Version, r.Info.Status, r.Labels["status"])
					}
				}
			}
			return nil
		})
		failOn(t, werr, err)
		if v, err := deployed(s, "web"); err != nil || v != 31 {
			t.Fatalf("after the upgrades: deployed revision %d, %v; want 31", v, err)
		}
	})

	// 16 goroutines take turns upgrading one release the way helm upgrade
	// writes (Create the new revision pending, supersede the deployed one,
	// deploy the new one), and read it between turns, on one shared store and
	// on a store each. No write may fail, and exactly one revision ends
	// deployed.
	for _, shared := range []bool{true, false} {
		name := "SeparateStores"
		if shared {
			name = "OneSharedStore"
		}
		t.Run("UpgradersOfOneRelease/"+name, func(t *testing.T) {
			s := h.open(t)
			mustCreate(t, s, rel("app", "default", 1, release.StatusDeployed))
			const workers, turns = 16, 3
			stores := make([]helm3.Store, workers)
			for i := range stores {
				stores[i] = s
				if !shared {
					stores[i] = h.reopen(t, s)
				}
			}
			var mu sync.Mutex
			var wg sync.WaitGroup
			errs := make(chan error, workers+1)
			// Readers of every revision all along, on the upgraders' stores:
			// reads that finish after a write must not make that store
			// forget the write.
			var latest atomic.Int64
			latest.Store(1)
			stopReads := make(chan struct{})
			readsDone := make(chan error, 1)
			go func() {
				readsDone <- readers(8, stopReads, func(id int) error {
					st := stores[id%workers]
					v := int(latest.Load())
					for _, k := range []string{key("app", v), key("app", max(v-1, 1))} {
						if _, err := st.Get(k); err != nil {
							return fmt.Errorf("reader get %s: %w", k, err)
						}
					}
					_, err := st.Query(map[string]string{"name": "app", "owner": "helm"})
					return err
				})
			}()
			for i := 0; i < workers; i++ {
				wg.Add(1)
				go func(st helm3.Store) {
					defer wg.Done()
					for turn := 0; turn < turns; turn++ {
						mu.Lock()
						last, err := deployed(st, "app")
						if err == nil {
							err = upgrade(st, "app", last, 1)
							latest.Store(int64(last + 1))
						}
						mu.Unlock()
						if err != nil {
							errs <- err
							return
						}
						// Reads racing the next upgrader's writes.
						if _, err := st.Query(map[string]string{"name": "app", "owner": "helm"}); err != nil {
							errs <- fmt.Errorf("history: %w", err)
							return
						}
						if _, err := deployed(st, "app"); err != nil && !errors.Is(err, helm3.ErrReleaseNotFound) {
							errs <- err
							return
						}
						if _, err := st.Get(key("app", 1)); err != nil {
							errs <- fmt.Errorf("get: %w", err)
							return
						}
					}
				}(stores[i])
			}
			wg.Wait()
			close(stopReads)
			if err := <-readsDone; err != nil {
				errs <- err
			}
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
			checkHistory(t, s, "app", 1+workers*turns)
		})
	}
}

// deployed returns the version of name's deployed revision, failing unless
// there is exactly one.
func deployed(s helm3.Store, name string) (int, error) {
	rs, err := s.Query(map[string]string{"name": name, "owner": "helm", "status": "deployed"})
	if err != nil {
		return 0, fmt.Errorf("deployed %s: %w", name, err)
	}
	if len(rs) != 1 {
		return 0, fmt.Errorf("deployed %s: %d deployed revisions %s", name, len(rs), joinKeys(rs))
	}
	return rs[0].Version, nil
}

// upgrade performs n upgrades of name from deployed version last, writing
// what helm upgrade writes.
func upgrade(s helm3.Store, name string, last, n int) error {
	ns := "default"
	for v := last + 1; v <= last+n; v++ {
		next := rel(name, ns, v, release.StatusPendingUpgrade)
		if err := s.Create(key(name, v), next); err != nil {
			return fmt.Errorf("create v%d: %w", v, err)
		}
		if err := s.Update(key(name, v-1), rel(name, ns, v-1, release.StatusSuperseded)); err != nil {
			return fmt.Errorf("supersede v%d: %w", v-1, err)
		}
		next.Info.Status = release.StatusDeployed
		if err := s.Update(key(name, v), next); err != nil {
			return fmt.Errorf("deploy v%d: %w", v, err)
		}
	}
	return nil
}

// checkHistory fails t unless name has revisions 1..n, all superseded but
// the last, which is deployed, each holding what was written.
func checkHistory(t *testing.T, s helm3.Store, name string, n int) {
	t.Helper()
	rs, err := s.Query(map[string]string{"name": name, "owner": "helm"})
	if err != nil {
		t.Fatalf("history of %s: %v", name, err)
	}
	if len(rs) != n {
		t.Fatalf("history of %s has %d revisions, want %d: %s", name, len(rs), n, joinKeys(rs))
	}
	for _, r := range rs {
		want := rel(name, "default", r.Version, release.StatusSuperseded)
		if r.Version == n {
			want.Info.Status = release.StatusDeployed
		}
		sameCustom(t, "history", r, want)
	}
}
