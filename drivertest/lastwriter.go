package drivertest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// testLastWriterWins checks helmstore's concurrency semantics, the same on
// every backend and the same as Helm's own drivers: an Update overwrites
// whatever is stored, however stale the writer's read, and concurrent
// Updates of one release leave exactly one of the written releases, whole.
// No write fails for losing a race (driver.ErrConflict is for a store that
// gave up; none should here).
func testLastWriterWins(t *testing.T, h Harness) {
	// Store A reads a release, another writer updates it, A updates it
	// from its stale read: A's Update succeeds and every reader gets A's
	// release.
	stale := func(t *testing.T, s, a, b helm3.Store) {
		orig := rel("lww", "default", 1, release.StatusDeployed)
		mustCreate(t, s, orig)
		read, err := a.Get(key("lww", 1))
		if err != nil {
			t.Fatalf("A get: %v", err)
		}
		byB := writerRelease("lww", 1, 1)
		if err := b.Update(key("lww", 1), byB); err != nil {
			t.Fatalf("B update: %v", err)
		}
		byA := writerRelease("lww", 1, 2)
		byA.Info.FirstDeployed = read.Info.FirstDeployed // what A read, changed
		if err := a.Update(key("lww", 1), byA); err != nil {
			t.Fatalf("A's update of a release B changed since A read it = %v; want success (last writer wins)", err)
		}
		for who, st := range map[string]helm3.Store{"A": a, "B": b} {
			got, err := st.Get(key("lww", 1))
			if err != nil {
				t.Fatalf("%s get after both updates: %v", who, err)
			}
			sameRelease(t, who+" get after A's stale update: A's release", got, byA)
		}
	}
	t.Run("StaleUpdate/OneStore", func(t *testing.T) {
		s := h.open(t)
		stale(t, s, s.Namespace("default"), s.Namespace("default"))
	})
	t.Run("StaleUpdate/TwoStores", func(t *testing.T) {
		s := h.open(t)
		stale(t, s, s, h.reopen(t, s))
	})

	// 16 writers update one release at once, each with its own contents,
	// on one shared store and on a store each.
	for _, shared := range []bool{true, false} {
		name := "SeparateStores"
		if shared {
			name = "OneSharedStore"
		}
		t.Run("ConcurrentUpdates/"+name, func(t *testing.T) {
			s := h.open(t)
			const writers, rounds = 16, 3
			stores := make([]helm3.Store, writers)
			for i := range stores {
				stores[i] = s
				if !shared {
					stores[i] = h.reopen(t, s)
				}
			}
			mustCreate(t, s, rel("one", "default", 1, release.StatusDeployed))
			for round := range rounds {
				written := make([]*release.Release, writers)
				enc := make([]wanted, writers)
				errs := make([]error, writers)
				start := make(chan struct{})
				var wg sync.WaitGroup
				for i := range writers {
					written[i] = writerRelease("one", 1, round*writers+i+1)
					enc[i] = want(t, written[i])
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-start
						errs[i] = stores[i].Update(key("one", 1), written[i])
					}()
				}
				close(start)
				wg.Wait()
				for i, err := range errs {
					if err != nil {
						t.Fatalf("round %d: writer %d's update failed: %v (concurrent updates must all succeed: last writer wins)", round, i, err)
					}
				}
				// Every store reads the same release: one of those written,
				// whole.
				final := -1
				for i, st := range stores {
					got, err := st.Get(key("one", 1))
					if err != nil {
						t.Fatalf("round %d: store %d get: %v", round, i, err)
					}
					w := whichWriter(t, got, enc)
					if w < 0 {
						t.Fatalf("round %d: store %d reads a release that no writer wrote whole (a mix of writes?): %s", round, i, brief(got))
					}
					if final < 0 {
						final = w
					} else if w != final {
						t.Fatalf("round %d: store %d reads writer %d's release, another store reads another's", round, i, w)
					}
				}
				rs, err := s.Query(map[string]string{"name": "one", "owner": "helm"})
				if err != nil || len(rs) != 1 {
					t.Fatalf("round %d: query of the release = %s, %v; want the one revision", round, joinKeys(rs), err)
				}
				if whichWriter(t, rs[0], enc[final:final+1]) != 0 {
					t.Fatalf("round %d: query returns %s, Get another release", round, brief(rs[0]))
				}
			}
		})
	}
}

// writerRelease is revision version of name as writer w writes it: every
// part of it (chart, values, manifest, labels, info) differs from other
// writers', so a release made of two writes is caught.
func writerRelease(name string, version, w int) *release.Release {
	r := rel(name, "default", version, release.StatusDeployed)
	r.Chart = testChart("demo", fmt.Sprintf("0.%d.0", w))
	r.Chart.Templates = append(r.Chart.Templates, &chart.File{Name: "templates/writer.txt", Data: fmt.Appendf(nil, "writer %d\n", w)})
	r.Config = map[string]interface{}{"writer": float64(w), "greeting": fmt.Sprintf("from %d", w)}
	r.Manifest = fmt.Sprintf("%s---\n# writer %d\n", r.Manifest, w)
	r.Labels = map[string]string{"writer": fmt.Sprint(w), fmt.Sprintf("only-w%d", w): "yes"}
	r.Info.Description = fmt.Sprintf("written by %d", w)
	if w%2 == 0 {
		r.Info.Status = release.StatusSuperseded
	}
	return r
}

// whichWriter returns the index of the release in written that got is,
// comparing every field and the custom labels, or -1 if it is none of them.
func whichWriter(t testing.TB, got *release.Release, written []wanted) int {
	g, labels := splitOf(t, got, false), customOnly(got.Labels)
	for i, w := range written {
		if g.equal(w.enc) && sameLabelSet(labels, w.labels) {
			return i
		}
	}
	return -1
}

// testReservedLabels checks the reserved-label rule: a custom label under
// helmstore.io/ is refused on Create and on Update, by an error that names
// the release and the label, and nothing is stored.
func testReservedLabels(t *testing.T, h Harness) {
	const label = "helmstore.io/x"
	refused := func(t *testing.T, op, k string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s of %s with the reserved label %q succeeded; want it refused", op, k, label)
		}
		if msg := err.Error(); !containsAll(msg, k, label) {
			t.Fatalf("%s with a reserved label: error %q does not name the release %s and the label %q", op, msg, k, label)
		}
	}
	t.Run("Create", func(t *testing.T) {
		s := h.open(t)
		r := rel("res", "default", 1, release.StatusDeployed)
		r.Labels = map[string]string{"team": "a", label: "1"}
		refused(t, "Create", key("res", 1), s.Create(key("res", 1), r))
		if got, err := s.Get(key("res", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("after a refused Create: Get = %s, %v; want ErrReleaseNotFound", brief(got), err)
		}
		if rs, err := s.Query(map[string]string{"name": "res", "owner": "helm"}); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("after a refused Create: Query = %s, %v; want ErrReleaseNotFound", joinKeys(rs), err)
		}
	})
	t.Run("Update", func(t *testing.T) {
		s := h.open(t)
		orig := rel("res", "default", 1, release.StatusDeployed)
		orig.Labels = map[string]string{"team": "a"}
		mustCreate(t, s, orig)
		r := writerRelease("res", 1, 7)
		r.Labels[label] = "1"
		refused(t, "Update", key("res", 1), s.Update(key("res", 1), r))
		got, err := s.Get(key("res", 1))
		if err != nil {
			t.Fatalf("after a refused Update: Get: %v", err)
		}
		sameRelease(t, "after a refused Update: the old release", got, orig)
	})
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
