package drivertest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/helmstore/helmstore/helm3"
)

// deltaRelease returns revision v of a release whose upgrades change values
// only: the same chart, values of a few KiB of which a few leaves change,
// and a manifest of about 64 KiB of which a few lines change. It is a
// function of its arguments, so any revision can be built again to compare.
func deltaRelease(name, ns string, v int, status release.Status) *release.Release {
	r := rand.New(rand.NewPCG(uint64(len(name)), 42))
	tag := fmt.Sprintf("v1.%d.0", v)
	replicas := 1 + v%3
	values := map[string]interface{}{
		"image":    map[string]interface{}{"repository": "registry.example/" + name, "tag": tag},
		"replicas": float64(replicas),
	}
	settings := map[string]interface{}{}
	for i := 0; i < 80; i++ {
		settings[fmt.Sprintf("setting%02d", i)] = fmt.Sprintf("%x-%x", r.Uint64(), r.Uint64())
	}
	values["settings"] = settings
	var m strings.Builder
	for i := 0; m.Len() < 64<<10; i++ {
		fmt.Fprintf(&m, "---\n# Source: %s/templates/deploy%d.yaml\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: %s-%d\n  namespace: %s\nspec:\n  replicas: %d\n  template:\n    spec:\n      containers:\n      - name: c%d\n        image: registry.example/%s:%s\n        env:\n",
			name, i, name, i, ns, replicas, i, name, tag)
		for j := 0; j < 6; j++ {
			fmt.Fprintf(&m, "        - name: VAR_%d_%x\n          value: %q\n", j, r.Uint64(), fmt.Sprint(r.Uint64()))
		}
	}
	t := helmtime.Unix(1700000000+int64(v)*60, 0).UTC()
	return &release.Release{
		Name: name, Namespace: ns, Version: v, Chart: testChart("delta", "1.0.0"), Config: values, Manifest: m.String(),
		Info: &release.Info{FirstDeployed: helmtime.Unix(1700000000, 0).UTC(), LastDeployed: t, Status: status, Description: "Upgrade complete"},
	}
}

// deltaUpgrade writes revision v of name as helm upgrade does (create it
// pending, supersede v-1, deploy v), to s and to the oracle m (if set).
func deltaUpgrade(s helm3.Store, m *memView, name, ns string, v int) error {
	type writer interface {
		Create(string, *release.Release) error
		Update(string, *release.Release) error
	}
	ws := []writer{s}
	if m != nil {
		ws = append(ws, *m)
	}
	for _, w := range ws {
		next := deltaRelease(name, ns, v, release.StatusPendingUpgrade)
		if v == 1 {
			next.Info.Status = release.StatusPendingInstall
		}
		if err := w.Create(key(name, v), next); err != nil {
			return fmt.Errorf("create %s: %w", key(name, v), err)
		}
		if v > 1 {
			err := w.Update(key(name, v-1), deltaRelease(name, ns, v-1, release.StatusSuperseded))
			if err != nil && !errors.Is(err, helm3.ErrReleaseNotFound) {
				return fmt.Errorf("supersede %s: %w", key(name, v-1), err)
			}
		}
		next.Info.Status = release.StatusDeployed
		if err := w.Update(key(name, v), next); err != nil {
			return fmt.Errorf("deploy %s: %w", key(name, v), err)
		}
	}
	return nil
}

// deltaReader returns a store over the data of s whose reads go to the
// backend (no part cache, no keyframes), so that a part missing from the
// store cannot be hidden by a cache: another store where the harness can
// open one, s itself otherwise.
func (h Harness) deltaReader(t *testing.T, s helm3.Store) helm3.Store {
	if h.Reopen == nil {
		return s
	}
	r := h.Reopen(t, s, helm3.WithCacheBytes(0))
	t.Cleanup(func() { r.Close() })
	return r
}

// checkRevisions fails t unless the revisions of name that s holds are
// exactly versions, each deep-equal to what the oracle holds.
func checkRevisions(t *testing.T, what string, s helm3.Store, m memView, name string, versions []int) {
	t.Helper()
	rs, err := s.Query(map[string]string{"name": name, "owner": "helm"})
	if len(versions) == 0 {
		if !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("%s: history of %s: %d revisions, %v; want none", what, name, len(rs), err)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: history of %s: %v", what, name, err)
	}
	var got []int
	for _, r := range rs {
		got = append(got, r.Version)
	}
	sort.Ints(got)
	if fmt.Sprint(got) != fmt.Sprint(versions) {
		t.Fatalf("%s: history of %s holds revisions %v, want %v", what, name, got, versions)
	}
	for _, r := range rs {
		want, err := m.wanted(t, key(name, r.Version))
		if err != nil {
			t.Fatal(err)
		}
		sameAs(t, what+": history", r, customOnly(r.Labels), want)
	}
	for _, v := range versions {
		got, err := s.Get(key(name, v))
		if err != nil {
			t.Fatalf("%s: get %s: %v", what, key(name, v), err)
		}
		want, err := m.wanted(t, key(name, v))
		if err != nil {
			t.Fatal(err)
		}
		sameAs(t, what+": get", got, customOnly(got.Labels), want)
	}
}

// wantNoParts fails t unless the namespace s is scoped to holds no
// releases and no parts.
func wantNoParts(t *testing.T, what string, s helm3.Store) {
	t.Helper()
	st := stats(t, s)
	n := 0
	for _, c := range st.Parts {
		n += c
	}
	if st.Releases != 0 || n != 0 || st.PartBytes != 0 {
		t.Fatalf("%s: store still holds %d releases, parts %v (%d bytes)", what, st.Releases, st.Parts, st.PartBytes)
	}
}

// testDeltas checks releases upgraded with values-only changes, whose
// manifests and values a store may keep as deltas against an earlier
// revision's: every revision reads back whole whichever revisions are
// deleted and in whatever order (the keyframe's own revision first), by
// another store too, concurrently too, and nothing is left once the last
// revision is gone.
func testDeltas(t *testing.T, h Harness) {
	const n = 12
	orders := map[string][]int{
		"KeyframeFirst":  {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11},
		"Middle":         {6, 5, 7, 4, 8, 3, 9, 2, 10},
		"AllButLast":     {11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1},
		"LastFirst":      {12, 11, 1, 10, 2, 9},
		"EveryOtherThen": {1, 3, 5, 7, 9, 11, 2, 4, 6, 8, 10},
	}
	for name, order := range orders {
		t.Run("DeleteOrder/"+name, func(t *testing.T) {
			s := h.open(t)
			r := h.deltaReader(t, s)
			m := h.newMemory()
			rel := "delta-" + strings.ToLower(name)
			if err := deltaUpgrade(s, &m, rel, "default", 1); err != nil {
				t.Fatal(err)
			}
			one := stats(t, s)
			for v := 2; v <= n; v++ {
				if err := deltaUpgrade(s, &m, rel, "default", v); err != nil {
					t.Fatal(err)
				}
			}
			all := stats(t, s)
			per := (all.PartBytes - one.PartBytes) / (n - 1)
			t.Logf("parts: %d bytes for the install, %d bytes per values-only upgrade", one.PartBytes, per)
			if per*8 > one.PartBytes {
				t.Errorf("values-only upgrades store %d bytes of parts each, the install %d: want at most 1/8", per, one.PartBytes)
			}
			left := map[int]bool{}
			for v := 1; v <= n; v++ {
				left[v] = true
			}
			versions := func() []int {
				var out []int
				for v := 1; v <= n; v++ {
					if left[v] {
						out = append(out, v)
					}
				}
				return out
			}
			checkRevisions(t, "before deletes", r, m, rel, versions())
			for _, v := range order {
				if _, err := s.Delete(key(rel, v)); err != nil {
					t.Fatalf("delete %s: %v", key(rel, v), err)
				}
				m.Delete(key(rel, v))
				delete(left, v)
				checkRevisions(t, fmt.Sprintf("after deleting revision %d", v), r, m, rel, versions())
			}
			// A further upgrade after the deletes still reads back.
			if err := deltaUpgrade(s, &m, rel, "default", n+1); err != nil {
				t.Fatal(err)
			}
			left[n+1] = true
			checkRevisions(t, "upgrade after the deletes", r, m, rel, append(versions(), n+1))
			for v := range left {
				if _, err := s.Delete(key(rel, v)); err != nil {
					t.Fatalf("delete %s: %v", key(rel, v), err)
				}
			}
			wantNoParts(t, "after deleting every revision", s)
		})
	}

	t.Run("Damage", func(t *testing.T) { testDeltaDamage(t, h) })

	// A rollback written by a store that knows no keyframe stores the
	// values and manifest of an earlier revision in full: parts with the
	// same content as that revision's deltas, which must not be taken for
	// them (a delta's digest is not its content's).
	t.Run("RollbackFromAnotherStore", func(t *testing.T) {
		s := h.open(t)
		if h.Reopen == nil {
			t.Skip("Harness.Reopen is not set")
		}
		other := h.deltaReader(t, s)
		m := h.newMemory()
		for v := 1; v <= 3; v++ {
			if err := deltaUpgrade(s, &m, "rb", "default", v); err != nil {
				t.Fatal(err)
			}
		}
		back := deltaRelease("rb", "default", 2, release.StatusDeployed)
		back.Version = 4
		for _, w := range []interface {
			Create(string, *release.Release) error
		}{other, m} {
			if err := w.Create(key("rb", 4), back); err != nil {
				t.Fatal(err)
			}
		}
		checkRevisions(t, "after the rollback", other, m, "rb", []int{1, 2, 3, 4})
		for v := 1; v <= 3; v++ {
			if _, err := s.Delete(key("rb", v)); err != nil {
				t.Fatal(err)
			}
			m.Delete(key("rb", v))
		}
		checkRevisions(t, "after deleting revisions 1-3", other, m, "rb", []int{4})
		if _, err := other.Delete(key("rb", 4)); err != nil {
			t.Fatal(err)
		}
		wantNoParts(t, "after deleting every revision", other)
	})

	// A store takes deltas against what it last read or wrote; another
	// store deletes every revision meanwhile, parts and all. The next
	// upgrade's delta must still read back (its base stored again).
	t.Run("BaseDeletedByAnotherStore", func(t *testing.T) {
		s := h.open(t)
		if h.Reopen == nil {
			t.Skip("Harness.Reopen is not set")
		}
		other := h.deltaReader(t, s)
		m := h.newMemory()
		for v := 1; v <= 3; v++ {
			if err := deltaUpgrade(s, &m, "gone", "default", v); err != nil {
				t.Fatal(err)
			}
		}
		for v := 1; v <= 3; v++ {
			if _, err := other.Delete(key("gone", v)); err != nil {
				t.Fatal(err)
			}
			m.Delete(key("gone", v))
		}
		wantNoParts(t, "after another store deleted every revision", other)
		for v := 4; v <= 5; v++ {
			if err := deltaUpgrade(s, &m, "gone", "default", v); err != nil {
				t.Fatal(err)
			}
		}
		checkRevisions(t, "upgrades after the base was deleted", other, m, "gone", []int{4, 5})
		if _, err := other.Delete(key("gone", 4)); err != nil {
			t.Fatal(err)
		}
		m.Delete(key("gone", 4))
		checkRevisions(t, "after deleting revision 4", other, m, "gone", []int{5})
		if _, err := s.Delete(key("gone", 5)); err != nil {
			t.Fatal(err)
		}
		wantNoParts(t, "after deleting every revision", other)
	})

	// Several goroutines upgrade releases of their own while one release is
	// upgraded on one store and its old revisions are deleted (Helm's
	// history max) on another store, concurrently.
	t.Run("Concurrent", func(t *testing.T) {
		s := h.open(t)
		deleter := s
		if h.Reopen != nil {
			deleter = h.Reopen(t, s)
			t.Cleanup(func() { deleter.Close() })
		}
		const upgrades, keep = 10, 2
		names := []string{"conc-a", "conc-b", "conc-c", "hist"}
		var wg sync.WaitGroup
		errs := make(chan error, len(names)+1)
		done := make(chan struct{})
		for _, name := range names {
			wg.Add(1)
			go func(name string) {
				defer wg.Done()
				for v := 1; v <= upgrades; v++ {
					if err := deltaUpgrade(s, nil, name, "default", v); err != nil {
						errs <- fmt.Errorf("%s: %w", name, err)
						return
					}
				}
			}(name)
		}
		var dwg sync.WaitGroup
		dwg.Add(1)
		go func() {
			defer dwg.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				rs, err := deleter.Query(map[string]string{"name": "hist", "owner": "helm"})
				if errors.Is(err, helm3.ErrReleaseNotFound) {
					continue
				}
				if err != nil {
					errs <- fmt.Errorf("history of hist: %w", err)
					return
				}
				var vs []int
				for _, r := range rs {
					vs = append(vs, r.Version)
					// Whatever is read must be what was written.
					want := deltaRelease("hist", "default", r.Version, r.Info.Status)
					if r.Info.Status != release.StatusPendingUpgrade && r.Info.Status != release.StatusPendingInstall && r.Info.Status != release.StatusDeployed && r.Info.Status != release.StatusSuperseded {
						errs <- fmt.Errorf("hist v%d: status %q", r.Version, r.Info.Status)
						return
					}
					g, gerr := json.Marshal(r)
					w, werr := json.Marshal(want)
					if gerr != nil || werr != nil || !bytes.Equal(g, w) || len(customOnly(r.Labels)) != 0 {
						errs <- fmt.Errorf("hist v%d read back differs from what was written (%v, %v)", r.Version, gerr, werr)
						return
					}
				}
				sort.Ints(vs)
				for i := 0; i+keep < len(vs); i++ {
					if _, err := deleter.Delete(key("hist", vs[i])); err != nil && !errors.Is(err, helm3.ErrReleaseNotFound) {
						errs <- fmt.Errorf("delete hist v%d: %w", vs[i], err)
						return
					}
				}
			}
		}()
		wg.Wait()
		close(done)
		dwg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		r := h.deltaReader(t, s)
		m := h.newMemory()
		for _, name := range names {
			rs, err := r.Query(map[string]string{"name": name, "owner": "helm"})
			if err != nil {
				t.Fatalf("history of %s: %v", name, err)
			}
			var vs []int
			for _, rl := range rs {
				vs = append(vs, rl.Version)
			}
			sort.Ints(vs)
			for _, v := range vs {
				status := release.StatusSuperseded
				if v == upgrades {
					status = release.StatusDeployed
				}
				m.Create(key(name, v), deltaRelease(name, "default", v, status))
			}
			if name != "hist" && len(vs) != upgrades || len(vs) == 0 || vs[len(vs)-1] != upgrades {
				t.Fatalf("%s holds revisions %v", name, vs)
			}
			checkRevisions(t, "after the concurrent upgrades", r, m, name, vs)
			for _, v := range vs {
				if _, err := s.Delete(key(name, v)); err != nil {
					t.Fatal(err)
				}
			}
		}
		wantNoParts(t, "after deleting every revision", r)
	})
}

// testDeltaDamage checks damage to deltas and their bases, through the
// backend's Tamperer: the releases using the damaged part are reported as
// driver.ErrCorrupt naming them (never a panic, garbage or another
// release), stay deletable, and nothing is left once all are deleted.
func testDeltaDamage(t *testing.T, h Harness) {
	if h.Tamper == nil {
		t.Skip("Harness.Tamper is not set")
	}
	// Each damage returns the revisions of "dmg" (1..3) it leaves corrupt.
	damages := map[string]func(ctx context.Context, tp Tamperer, base, d2, d3 string) ([]int, error){
		"BaseMissing": func(ctx context.Context, tp Tamperer, base, d2, d3 string) ([]int, error) {
			return []int{1, 2, 3}, tp.DeletePart(ctx, "default", base)
		},
		"BaseFlipped": func(ctx context.Context, tp Tamperer, base, d2, d3 string) ([]int, error) {
			f, err := tp.Part(ctx, "default", base)
			if err != nil {
				return nil, err
			}
			return []int{1, 2, 3}, tp.SetPart(ctx, "default", base, flip(f))
		},
		"DeltaFlipped": func(ctx context.Context, tp Tamperer, base, d2, d3 string) ([]int, error) {
			f, err := tp.Part(ctx, "default", d2)
			if err != nil {
				return nil, err
			}
			return []int{2}, tp.SetPart(ctx, "default", d2, flip(f))
		},
		"DeltaMissing": func(ctx context.Context, tp Tamperer, base, d2, d3 string) ([]int, error) {
			return []int{2}, tp.DeletePart(ctx, "default", d2)
		},
		"DeltaSwapped": func(ctx context.Context, tp Tamperer, base, d2, d3 string) ([]int, error) {
			// Another revision's delta against the same base: it decodes,
			// to the wrong manifest, which its digest tells.
			f, err := tp.Part(ctx, "default", d3)
			if err != nil {
				return nil, err
			}
			return []int{2}, tp.SetPart(ctx, "default", d2, f)
		},
		"DeltaTruncated": func(ctx context.Context, tp Tamperer, base, d2, d3 string) ([]int, error) {
			f, err := tp.Part(ctx, "default", d2)
			if err != nil {
				return nil, err
			}
			return []int{2}, tp.SetPart(ctx, "default", d2, f[:len(f)/2])
		},
		"DeltaBomb": func(ctx context.Context, tp Tamperer, base, d2, d3 string) ([]int, error) {
			// A delta frame (type 3) naming the right base, whose stream
			// inflates to 1 GiB.
			f, err := tp.Part(ctx, "default", d2)
			if err != nil {
				return nil, err
			}
			b := bomb(1000)
			frame := append(append([]byte{3}, f[1:33]...), b[1:]...)
			return []int{2}, tp.SetPart(ctx, "default", d2, frame)
		},
		"FullWhereDeltaExpected": func(ctx context.Context, tp Tamperer, base, d2, d3 string) ([]int, error) {
			// The base's full frame stored under the delta's digest.
			f, err := tp.Part(ctx, "default", base)
			if err != nil {
				return nil, err
			}
			return []int{2}, tp.SetPart(ctx, "default", d2, f)
		},
	}
	for name, dmg := range damages {
		t.Run(name, func(t *testing.T) {
			s := h.open(t)
			tp := h.Tamper(t, s)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			m := h.newMemory()
			for v := 1; v <= 3; v++ {
				if err := deltaUpgrade(s, &m, "dmg", "default", v); err != nil {
					t.Fatal(err)
				}
			}
			if err := deltaUpgrade(s, &m, "fine", "default", 1); err != nil {
				t.Fatal(err)
			}
			var heads [4]StoredHead
			for v := 1; v <= 3; v++ {
				var err error
				if heads[v], err = tp.Head(ctx, "default", key("dmg", v)); err != nil {
					t.Fatal(err)
				}
			}
			base, d2, d3 := heads[1].Manifest, heads[2].Manifest, heads[3].Manifest
			if base == d2 || d2 == d3 {
				t.Fatalf("revisions 2 and 3 are not stored as deltas (manifest digests %s %s %s)", base, d2, d3)
			}
			bad, err := dmg(ctx, tp, base, d2, d3)
			if err != nil {
				t.Fatalf("damage: %v", err)
			}
			r := h.reopen(t, s, helm3.WithCacheBytes(0))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			corrupt := map[int]bool{}
			for _, v := range bad {
				corrupt[v] = true
			}
			for v := 1; v <= 3; v++ {
				k := key("dmg", v)
				got, err := r.Get(k)
				if corrupt[v] {
					if !errors.Is(err, helm3.ErrCorrupt) || !strings.Contains(err.Error(), k) {
						t.Fatalf("Get %s = %v; want helm3.ErrCorrupt naming it", k, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("Get %s: %v", k, err)
				}
				want, _ := m.Get(k)
				sameCustom(t, "undamaged revision", got, want)
			}
			checkRevisions(t, "other release", r, m, "fine", []int{1})
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
				t.Fatalf("reading the damaged releases allocated %d MiB", grew>>20)
			}
			for v := 1; v <= 3; v++ {
				if _, err := s.Delete(key("dmg", v)); err != nil && !errors.Is(err, helm3.ErrCorrupt) {
					t.Fatalf("Delete %s: %v", key("dmg", v), err)
				}
			}
			checkRevisions(t, "other release after the deletes", r, m, "fine", []int{1})
			if _, err := s.Delete(key("fine", 1)); err != nil {
				t.Fatal(err)
			}
			wantNoParts(t, "after deleting every release", r)
		})
	}
}
