package drivertest

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// collectRounds is how many upgrades of each release the Collect test's
// writer makes while another store collects.
const collectRounds = 8

// testCollect runs helm3.Collect from another store over the same data,
// on the "" view and on a namespace's, again and again while a writer
// installs, upgrades (Helm's create, supersede, deploy) and uninstalls
// releases sharing parts in two namespaces: every write succeeds, and
// afterwards the releases read back as written and Stats counts exactly
// the parts they reference (Collect removed nothing a release used or a
// write in flight was about to use). A store whose backend leaves no
// garbage collects nothing, and returns nil.
func testCollect(t *testing.T, h Harness) {
	s := h.open(t)
	c := h.reopen(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	namespaces := []string{"default", "team-a"}
	shared := testChart("shared", "1.0.0")
	revision := func(ns, name string, v int, st release.Status) *release.Release {
		r := rel(name, ns, v, st)
		r.Chart = shared
		r.Config = map[string]interface{}{"pick": float64(v % 3)}
		return r
	}
	var (
		mu   sync.Mutex
		live = map[string]*release.Release{} // ns/key -> release
	)
	stop := make(chan struct{})
	collected := make(chan error, 1)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				if n > 0 {
					collected <- nil
					return
				}
			default:
			}
			view := c.Namespace("")
			if n%2 == 1 {
				view = c.Namespace(namespaces[n/2%len(namespaces)])
			}
			if err := helm3.Collect(ctx, view); err != nil {
				collected <- fmt.Errorf("collect %d: %w", n, err)
				return
			}
			n++
			runtime.Gosched()
		}
	}()
	var wg sync.WaitGroup
	errs := make(chan error, len(namespaces))
	for _, ns := range namespaces {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v := s.Namespace(ns)
			put := func(r *release.Release, create bool) error {
				k := key(r.Name, r.Version)
				var err error
				if create {
					err = v.Create(k, r)
				} else {
					err = v.Update(k, r)
				}
				if err != nil {
					return fmt.Errorf("%s %s/%s: %w", map[bool]string{true: "create", false: "update"}[create], ns, k, err)
				}
				mu.Lock()
				live[ns+"/"+k] = r
				mu.Unlock()
				return nil
			}
			for _, name := range []string{"app", "web"} {
				if err := put(revision(ns, name, 1, release.StatusDeployed), true); err != nil {
					errs <- err
					return
				}
			}
			for i := 2; i <= collectRounds; i++ {
				for _, name := range []string{"app", "web"} {
					for _, w := range []struct {
						r      *release.Release
						create bool
					}{
						{revision(ns, name, i, release.StatusPendingUpgrade), true},
						{revision(ns, name, i-1, release.StatusSuperseded), false},
						{revision(ns, name, i, release.StatusDeployed), false},
					} {
						if err := put(w.r, w.create); err != nil {
							errs <- err
							return
						}
					}
					if i > 2 { // history kept at two revisions
						k := key(name, i-2)
						if _, err := v.Delete(k); err != nil {
							errs <- fmt.Errorf("delete %s/%s: %w", ns, k, err)
							return
						}
						mu.Lock()
						delete(live, ns+"/"+k)
						mu.Unlock()
					}
				}
			}
			if _, err := v.Delete(key("web", collectRounds)); err != nil { // web uninstalled, but for one revision
				errs <- fmt.Errorf("delete %s/web: %w", ns, err)
				return
			}
			mu.Lock()
			delete(live, ns+"/"+key("web", collectRounds))
			mu.Unlock()
		}()
	}
	wg.Wait()
	close(stop)
	close(errs)
	for err := range errs {
		t.Fatalf("a write while another store collects: %v", err)
	}
	if err := <-collected; err != nil {
		t.Fatal(err)
	}
	if err := helm3.Collect(ctx, c.Namespace("")); err != nil {
		t.Fatalf("collect after the writes: %v", err)
	}
	cold := h.reopen(t, s, helm3.WithCacheBytes(0))
	for _, ns := range namespaces {
		var want []*release.Release
		for k, r := range live {
			if r.Namespace == ns {
				want = append(want, r)
				got, err := cold.Namespace(ns).Get(key(r.Name, r.Version))
				if err != nil {
					t.Fatalf("get %s after collecting: %v", k, err)
				}
				sameRelease(t, "get "+k+" after collecting", got, r)
			}
		}
		list, err := cold.Namespace(ns).List(func(*release.Release) bool { return true })
		if err != nil || len(list) != len(want) {
			t.Fatalf("list %s after collecting: %d releases (%v); want %d", ns, len(list), err, len(want))
		}
		wantStats(t, "namespace "+ns+" after collecting", cold.Namespace(ns), want)
	}
}
