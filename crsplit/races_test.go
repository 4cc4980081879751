package crsplit

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// racers are the goroutines of the race tests, as many as the issue had
// `helm upgrade`s of one release.
const racers = 16

// stores returns n stores over namespace ns: the same one n times
// (goroutines of one process, which helm3.Init gives one store), or n
// separately opened ones (n processes).
func stores(t *testing.T, ns string, n int, shared bool) []helm3.Store {
	t.Helper()
	k := cluster(t)
	out := make([]helm3.Store, n)
	for i := range out {
		if i == 0 || !shared {
			out[i], _ = openAs(t, k, kubeenv.Admin, ns)
		} else {
			out[i] = out[0]
		}
	}
	return out
}

// readWhile runs readers of release name on ss until stop is closed:
// Queries of its deployed revision and of all, and Lists, whose answers land in the
// stores' caches in whatever order they finish.
func readWhile(t *testing.T, ss []helm3.Store, name string, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		s := ss[i%len(ss)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				switch n % 3 {
				case 0:
					// As helm status: the deployed revision.
					_, err = s.Query(map[string]string{"name": name, "owner": "helm", "status": "deployed"})
				case 1:
					_, err = s.List(func(*release.Release) bool { return true })
				case 2:
					_, err = s.Query(map[string]string{"name": name, "owner": "helm"})
				}
				if err != nil && !errors.Is(err, helm3.ErrReleaseNotFound) {
					t.Errorf("reader: %v", err)
					return
				}
			}
		}()
	}
	return &wg
}

// TestConcurrentUpdatesOneStore: goroutines of one store each read a release
// and update it, over and over, while others read it. Within one store the
// last Update wins, as with Helm's Secrets driver: none may fail. (Before,
// reads finishing out of order sent the cached resourceVersion back in
// time, and two Updates of one store raced each other with the same
// precondition: false "modified concurrently" conflicts.)
func TestConcurrentUpdatesOneStore(t *testing.T) { testConcurrentUpdates(t, true) }

// TestConcurrentUpdatesSeparateStores: the same with a store per goroutine:
// the last writer wins across stores too, so none may fail either, and the
// release left is exactly one of those written, whole.
func TestConcurrentUpdatesSeparateStores(t *testing.T) { testConcurrentUpdates(t, false) }

func testConcurrentUpdates(t *testing.T, shared bool) {
	ns := newNamespace(t, cluster(t))
	ss := stores(t, ns, racers, shared)
	if err := ss[0].Create(key("app", 1), smallRelease("app", ns, 1, "c")); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	readers := readWhile(t, ss, "app", stop)
	const rounds = 8
	var wg sync.WaitGroup
	var written atomic.Int64
	var writes sync.Map // description -> *release.Release written
	for g := 0; g < racers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := ss[g]
			for r := 0; r < rounds; r++ {
				rls, err := s.Get(key("app", 1))
				if err != nil {
					t.Errorf("goroutine %d: get: %v", g, err)
					return
				}
				read := rls.Info.Description
				rls.Info.Description = fmt.Sprintf("goroutine %d round %d", g, r)
				writes.Store(rls.Info.Description, rls)
				err = s.Update(key("app", 1), rls)
				if err == nil {
					written.Add(1)
					continue
				}
				t.Errorf("goroutine %d: update (after reading %q): %v", g, read, err)
				return
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if written.Load() != racers*rounds {
		t.Fatalf("%d updates of %d written", written.Load(), racers*rounds)
	}
	// One of the writes is what is stored, whole, the same for every
	// store.
	var last string
	for i, s := range []helm3.Store{ss[0], ss[racers-1]} {
		got, err := s.Get(key("app", 1))
		if err != nil {
			t.Fatal(err)
		}
		want, ok := writes.Load(got.Info.Description)
		if !ok {
			t.Fatalf("the release left is none of those written: description %q", got.Info.Description)
		}
		sameAsHelm(t, "the release left", got, want.(*release.Release))
		if i > 0 && got.Info.Description != last {
			t.Fatalf("stores disagree on the release left: %q and %q", last, got.Info.Description)
		}
		last = got.Info.Description
	}
}

// TestConcurrentUpgradesOneStore: goroutines of one store run Helm's upgrade
// writes on one release (read the deployed revision, create the next one
// pending-upgrade, mark the previous superseded, the new one deployed)
// while others read it. No Update may fail, and at the end exactly one
// revision is deployed: before, a false conflict on the supersede (which
// Helm only logs) left two.
func TestConcurrentUpgradesOneStore(t *testing.T) { testConcurrentUpgrades(t, true) }

// TestConcurrentUpgradesSeparateStores: the same with a store per
// goroutine. Only the goroutine that created a revision writes the one
// before it, and a revision is superseded only once deployed: Helm's
// protocol leaves no room for a conflict there either.
func TestConcurrentUpgradesSeparateStores(t *testing.T) { testConcurrentUpgrades(t, false) }

func testConcurrentUpgrades(t *testing.T, shared bool) {
	ns := newNamespace(t, cluster(t))
	ss := stores(t, ns, racers, shared)
	if err := ss[0].Create(key("app", 1), smallRelease("app", ns, 1, "c")); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	readers := readWhile(t, ss, "app", stop)
	const upgrades, attempts = 3, 600
	var wg sync.WaitGroup
	var done atomic.Int64
	var failed atomic.Bool // the others stop at the first failure
	for g := 0; g < racers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := ss[g]
			for n, a := 0, 0; n < upgrades && a < attempts && !failed.Load(); a++ {
				ok, err := upgrade(s, ns, "app")
				if err != nil {
					failed.Store(true)
					t.Errorf("goroutine %d: %v", g, err)
					return
				}
				if ok {
					n++
					done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	readers.Wait()
	if t.Failed() {
		return
	}
	if done.Load() == 0 {
		t.Fatal("no upgrade went through")
	}
	deployed, err := ss[0].Query(map[string]string{"name": "app", "owner": "helm", "status": "deployed"})
	if err != nil {
		t.Fatalf("deployed revisions after %d upgrades: %v", done.Load(), err)
	}
	if len(deployed) != 1 {
		var vs []int
		for _, r := range deployed {
			vs = append(vs, r.Version)
		}
		t.Fatalf("%d revisions deployed after %d upgrades: %v", len(deployed), done.Load(), vs)
	}
	all, err := ss[0].Query(map[string]string{"name": "app", "owner": "helm"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != int(done.Load())+1 || deployed[0].Version != len(all) {
		t.Fatalf("%d revisions, %d upgrades, revision %d deployed", len(all), done.Load(), deployed[0].Version)
	}
	for _, r := range all {
		if r.Version != deployed[0].Version && r.Info.Status != release.StatusSuperseded {
			t.Fatalf("revision %d is %s, want superseded", r.Version, r.Info.Status)
		}
	}
}

// upgrade does Helm's writes of one `helm upgrade` of name on s. ok is false
// when another upgrade is in the way (no revision deployed right now, or
// the next revision taken): Helm would fail with "another operation is in
// progress"; the caller tries again. An error is a failure Helm would
// not expect.
func upgrade(s helm3.Store, ns, name string) (ok bool, err error) {
	rs, err := s.Query(map[string]string{"name": name, "owner": "helm", "status": "deployed"})
	if errors.Is(err, helm3.ErrReleaseNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("query deployed: %w", err)
	}
	cur := rs[0]
	for _, r := range rs {
		if r.Version > cur.Version {
			cur = r
		}
	}
	next := smallVariant(name, ns, cur.Version+1, cur.Version%3, "c")
	next.Info.Status = release.StatusPendingUpgrade
	if err := s.Create(key(name, next.Version), next); errors.Is(err, helm3.ErrReleaseExists) {
		return false, nil
	} else if err != nil {
		return false, fmt.Errorf("create revision %d: %w", next.Version, err)
	}
	cur.Info.Status = release.StatusSuperseded
	if err := s.Update(key(name, cur.Version), cur); err != nil {
		return false, fmt.Errorf("supersede revision %d: %w", cur.Version, err)
	}
	next.Info.Status = release.StatusDeployed
	if err := s.Update(key(name, next.Version), next); err != nil {
		return false, fmt.Errorf("deploy revision %d: %w", next.Version, err)
	}
	return true, nil
}

// TestConcurrentInstallUninstallOneStore: workers of one store install and
// uninstall releases of their own that share a chart (and some values).
// The chart's owner list changes all the time; no Delete may fail, and
// nothing may be left behind. (Before, cleanups losing 20 times in a row
// made Deletes fail with "its owners kept changing", after the release was
// deleted.)
func TestConcurrentInstallUninstallOneStore(t *testing.T) { testInstallUninstall(t, true) }

// TestConcurrentInstallUninstallSeparateStores: the same, a store each.
func TestConcurrentInstallUninstallSeparateStores(t *testing.T) { testInstallUninstall(t, false) }

func testInstallUninstall(t *testing.T, shared bool) {
	ns := newNamespace(t, cluster(t))
	ss := stores(t, ns, racers, shared)
	const rounds = 15
	var wg sync.WaitGroup
	for w := 0; w < racers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := ss[w]
			for r := 0; r < rounds; r++ {
				name := fmt.Sprintf("w%d-r%d", w, r)
				// Two revisions live at a time per worker, so that the
				// chart always has owners coming and going.
				if err := s.Create(key(name, 1), smallVariant(name, ns, 1, r%3, "shared")); err != nil {
					t.Errorf("worker %d: create %s: %v", w, name, err)
					return
				}
				if r == 0 {
					continue
				}
				prev := fmt.Sprintf("w%d-r%d", w, r-1)
				if _, err := s.Delete(key(prev, 1)); err != nil {
					t.Errorf("worker %d: delete %s: %v", w, prev, err)
					return
				}
			}
			last := fmt.Sprintf("w%d-r%d", w, rounds-1)
			if _, err := s.Delete(key(last, 1)); err != nil {
				t.Errorf("worker %d: delete %s: %v", w, last, err)
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	_, b := openAs(t, cluster(t), kubeenv.Admin, ns)
	assertNoObjects(t, b, ns, "left after every release was deleted")
}
