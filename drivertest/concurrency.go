package drivertest

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

func testConcurrency(t *testing.T, h Harness) {
	t.Run("CreateSameKey", func(t *testing.T) {
		s := h.open(t)
		const n = 8
		errs := make([]error, n)
		rs := make([]*release.Release, n)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := 0; i < n; i++ {
			rs[i] = rel("race", "default", 1, release.StatusDeployed)
			rs[i].Info.Description = fmt.Sprintf("writer %d", i)
			rs[i].Config = map[string]interface{}{"writer": float64(i)}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				<-start
				errs[i] = s.Create(key("race", 1), rs[i])
			}(i)
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil && winner >= 0:
				t.Fatalf("writers %d and %d both created the same key", winner, i)
			case err == nil:
				winner = i
			case !errors.Is(err, helm3.ErrReleaseExists):
				t.Fatalf("writer %d: %v, want ErrReleaseExists", i, err)
			}
		}
		if winner < 0 {
			t.Fatal("no writer won")
		}
		got, err := s.Get(key("race", 1))
		if err != nil {
			t.Fatal(err)
		}
		sameRelease(t, "the winner's release", got, rs[winner])
	})
	t.Run("ConcurrentUpgrades", func(t *testing.T) {
		s := h.open(t)
		const releases, upgrades = 6, 5
		var wg sync.WaitGroup
		errs := make(chan error, releases)
		for i := 0; i < releases; i++ {
			wg.Add(1)
			go func(name string) {
				defer wg.Done()
				for v := 1; v <= upgrades; v++ {
					if err := s.Create(key(name, v), rel(name, "default", v, release.StatusDeployed)); err != nil {
						errs <- err
						return
					}
					if v > 1 {
						if err := s.Update(key(name, v-1), rel(name, "default", v-1, release.StatusSuperseded)); err != nil {
							errs <- err
							return
						}
					}
				}
			}(fmt.Sprintf("app%d", i))
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		all, err := s.List(func(*release.Release) bool { return true })
		if err != nil || len(all) != releases*upgrades {
			t.Fatalf("after concurrent upgrades: %d releases, %v; want %d", len(all), err, releases*upgrades)
		}
		for _, r := range all {
			want := rel(r.Name, "default", r.Version, release.StatusSuperseded)
			if r.Version == upgrades {
				want.Info.Status = release.StatusDeployed
			}
			sameCustom(t, "after concurrent upgrades", r, want)
		}
	})
	t.Run("ReadsDuringDeletes", func(t *testing.T) {
		// Readers racing deletes see each release whole or not at all:
		// never an error about its parts.
		s := h.open(t)
		const n = 20
		for v := 1; v <= n; v++ {
			mustCreate(t, s, rel("app", "default", v, release.StatusSuperseded))
		}
		done := make(chan struct{})
		errs := make(chan error, 1)
		go func() {
			defer close(done)
			for v := 1; v <= n; v++ {
				if _, err := s.Delete(key("app", v)); err != nil {
					errs <- err
					return
				}
			}
		}()
		for reading := true; reading; {
			select {
			case <-done:
				reading = false
			default:
			}
			for v := 1; v <= n; v++ {
				r, err := s.Get(key("app", v))
				if err != nil && !errors.Is(err, helm3.ErrReleaseNotFound) {
					t.Fatalf("get during deletes: %v", err)
				}
				if err == nil && (r.Chart == nil || r.Config == nil || r.Manifest == "") {
					t.Fatalf("get during deletes returned a partial release %s", brief(r))
				}
			}
			rs, err := s.List(func(*release.Release) bool { return true })
			if err != nil {
				t.Fatalf("list during deletes: %v", err)
			}
			for _, r := range rs {
				if r == nil || r.Chart == nil || r.Manifest == "" {
					t.Fatal("list during deletes returned a partial release")
				}
			}
		}
		select {
		case err := <-errs:
			t.Fatal(err)
		default:
		}
	})
	t.Run("DeleteWhileReusing", func(t *testing.T) {
		// One writer keeps creating and deleting a release while another
		// keeps creating releases that share its chart and reading them
		// back: a part still referenced must never be collected.
		s := h.open(t)
		var wg sync.WaitGroup
		errs := make(chan error, 2)
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 15; i++ {
				if err := s.Create(key("churn", 1), rel("churn", "default", 1, release.StatusDeployed)); err != nil {
					errs <- err
					return
				}
				if _, err := s.Delete(key("churn", 1)); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() {
			defer wg.Done()
			for v := 1; v <= 15; v++ {
				r := rel("steady", "default", v, release.StatusDeployed)
				if err := s.Create(key("steady", v), r); err != nil {
					errs <- err
					return
				}
				got, err := s.Get(key("steady", v))
				if err != nil {
					errs <- fmt.Errorf("reading back steady v%d: %w", v, err)
					return
				}
				if got.Chart == nil || got.Chart.Metadata.Name != "demo" {
					errs <- fmt.Errorf("steady v%d came back without its chart", v)
					return
				}
			}
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		for v := 1; v <= 15; v++ {
			if _, err := s.Get(key("steady", v)); err != nil {
				t.Fatalf("steady v%d after the churn: %v", v, err)
			}
		}
	})
}
