package drivertest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// shapeTimeout is the operation bound of the stores that read reshaped
// data; a call taking more than three times as long fails.
const shapeTimeout = 10 * time.Second

// shapeAllocBound bounds what one call may allocate around reshaped data:
// the releases are a few KiB, so anything near this is a decode that
// trusted a count or size it should not have.
const shapeAllocBound = 256 << 20

// shapeTargets are what the Shapes tests damage: alpha's head, the chart
// alpha shares with beta, and alpha's own manifest.
var shapeTargets = []string{"Head", "SharedPart", "OwnPart"}

// testShapes damages how a backend stores its records, shape by shape
// (Shapes), through a Tamperer that is a Reshaper.
func testShapes(t *testing.T, h Harness) {
	if h.Tamper == nil {
		t.Skip("Harness.Tamper is not set: the driver cannot be checked against damaged stored data")
	}
	if _, ok := h.Tamper(t, h.open(t)).(Reshaper); !ok {
		t.Skip("the harness's Tamperer is not a Reshaper: the driver cannot be checked against damage to the shape of its records")
	}
	for _, shape := range Shapes {
		for _, target := range shapeTargets {
			t.Run(string(shape)+"/"+target, func(t *testing.T) {
				for i := 0; ; i++ {
					last := false
					t.Run(fmt.Sprint(i), func(t *testing.T) { reshaped(t, h, shape, target, i, &last) })
					if last {
						return
					}
					if i >= 100 {
						t.Fatalf("the Reshaper gave more than 100 variants of %s", shape)
					}
				}
			})
		}
	}
}

// shapeRelease is one release of a Shapes test.
func shapeRelease(name, ns, chart string) *release.Release {
	r := rel(name, ns, 1, release.StatusDeployed)
	if chart == "other" {
		r.Chart = testChart("other", "1.0.0")
	}
	r.Config = map[string]interface{}{"who": name}
	r.Labels = map[string]string{"team": "x"}
	return r
}

// reshaped applies variant i of shape to target on fresh data and checks
// what the stores read; when there is no such variant, it sets last and
// skips.
func reshaped(t *testing.T, h Harness, shape Shape, target string, i int, last *bool) {
	s := h.open(t)
	tp := h.Tamper(t, s).(Reshaper)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// alpha and beta share their chart; gamma shares nothing; team-a
	// holds a copy of alpha, its parts the namespace's own.
	alpha, beta, gamma := shapeRelease("alpha", "default", "demo"), shapeRelease("beta", "default", "demo"), shapeRelease("gamma", "default", "other")
	copyA := shapeRelease("alpha", "team-a", "demo")
	for _, r := range []*release.Release{alpha, beta, gamma} {
		mustCreate(t, s, r)
	}
	mustCreate(t, s.Namespace("team-a"), copyA)
	ak := key("alpha", 1)
	head, err := h.Tamper(t, s).Head(ctx, "default", ak)
	if err != nil {
		t.Fatal(err)
	}
	tg := Target{Namespace: "default"}
	damaged := []*release.Release{alpha}
	switch target {
	case "Head":
		tg.Key = ak
	case "SharedPart":
		tg.Part = head.Chart
		damaged = append(damaged, beta)
	case "OwnPart":
		tg.Part = head.Manifest
	}
	// A store that has read everything (its cache may serve damaged
	// parts whole), and, made after the damage, one with no cache.
	warm := h.reopen(t, s, helm3.WithTimeout(shapeTimeout))
	if list, err := warm.Namespace("").List(func(*release.Release) bool { return true }); err != nil || len(list) != 4 {
		t.Fatalf("before the damage: List = %s, %v", joinKeys(list), err)
	}
	desc, err := tp.Reshape(ctx, tg, shape, i)
	if errors.Is(err, ErrNoVariant) {
		*last = true
		t.Skipf("no variant %d of %s for the %s", i, shape, target)
	}
	if err != nil {
		t.Fatalf("reshape: %v", err)
	}
	t.Logf("%s: %s", target, desc)
	cold := h.reopen(t, s, helm3.WithCacheBytes(0), helm3.WithTimeout(shapeTimeout))
	isDamaged := func(r *release.Release) bool {
		return r.Namespace == "default" && slices.ContainsFunc(damaged, func(d *release.Release) bool { return d.Name == r.Name })
	}
	whole := []*release.Release{alpha, beta, gamma}
	for _, v := range []struct {
		what string
		s    helm3.Store
	}{{"a store with no cache", cold}, {"a store that read before", warm}} {
		what := desc + ", read by " + v.what
		for _, r := range whole {
			var got *release.Release
			err := bounded(t, what+": Get "+r.Name, func() (err error) { got, err = v.s.Get(key(r.Name, 1)); return err })
			switch {
			case err == nil:
				sameRelease(t, what+": Get "+r.Name, got, r)
			case !isDamaged(r):
				t.Fatalf("%s: Get %s, which the damage does not touch: %v", what, r.Name, err)
			case !errors.Is(err, helm3.ErrCorrupt) || errors.Is(err, helm3.ErrReleaseNotFound) || !strings.Contains(err.Error(), key(r.Name, 1)):
				t.Fatalf("%s: Get %s = %v; want it whole or helm3.ErrCorrupt naming it", what, r.Name, err)
			}
		}
		var got *release.Release
		if err := bounded(t, what+": Get team-a/alpha", func() (err error) { got, err = v.s.Namespace("team-a").Get(ak); return err }); err != nil {
			t.Fatalf("%s: Get team-a/alpha, a copy the damage does not touch: %v", what, err)
		}
		sameRelease(t, what+": Get team-a/alpha", got, copyA)
		for _, ns := range []string{"default", ""} {
			want := whole
			if ns == "" {
				want = append(slices.Clone(whole), copyA)
			}
			var list []*release.Release
			err := bounded(t, what+": List "+ns, func() (err error) {
				list, err = v.s.Namespace(ns).List(func(*release.Release) bool { return true })
				return err
			})
			shapeAnswer(t, fmt.Sprintf("%s: List %q", what, ns), list, err, want, isDamaged)
			err = bounded(t, what+": Query "+ns, func() (err error) {
				list, err = v.s.Namespace(ns).Query(map[string]string{"owner": "helm", "team": "x"})
				return err
			})
			shapeAnswer(t, fmt.Sprintf("%s: Query %q", what, ns), list, err, want, isDamaged)
		}
	}
	// Deletable: each damaged release goes, through either store.
	for _, r := range damaged {
		err := bounded(t, desc+": Delete "+r.Name, func() error { _, err := cold.Delete(key(r.Name, 1)); return err })
		if err != nil && !errors.Is(err, helm3.ErrCorrupt) {
			t.Fatalf("%s: Delete %s: %v; want nil or helm3.ErrCorrupt", desc, r.Name, err)
		}
		for _, v := range []helm3.Store{cold, warm} {
			if _, err := v.Get(key(r.Name, 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Fatalf("%s: after Delete %s: Get = %v; want ErrReleaseNotFound", desc, r.Name, err)
			}
		}
	}
	fresh := h.reopen(t, s, helm3.WithCacheBytes(0), helm3.WithTimeout(shapeTimeout))
	var left []*release.Release
	for _, r := range whole {
		if !isDamaged(r) {
			left = append(left, r)
		}
	}
	list, err := fresh.List(func(*release.Release) bool { return true })
	if a, b := canon(t, list), canon(t, left); err != nil || !equalLines(a, b) {
		t.Fatalf("%s: after deleting the damaged releases: List = %v: %s", desc, err, lineDiff(a, b))
	}
	got, err := fresh.Namespace("team-a").Get(ak)
	if err != nil {
		t.Fatalf("%s: after deleting the damaged releases: Get team-a/alpha: %v", desc, err)
	}
	sameRelease(t, desc+": after deleting the damaged releases: team-a/alpha", got, copyA)
}

// shapeAnswer checks a List or Query around reshaped data: no error, every
// release the damage does not touch, whole, and of the damaged ones only
// whole ones.
func shapeAnswer(t *testing.T, what string, got []*release.Release, err error, want []*release.Release, isDamaged func(*release.Release) bool) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v; want the releases the damage does not touch", what, err)
	}
	byKey := map[string]*release.Release{}
	for _, r := range got {
		byKey[r.Namespace+"/"+key(r.Name, r.Version)] = r
	}
	for _, w := range want {
		k := w.Namespace + "/" + key(w.Name, w.Version)
		g, ok := byKey[k]
		delete(byKey, k)
		if !ok {
			if isDamaged(w) {
				continue
			}
			t.Fatalf("%s = %s: lost %s, which the damage does not touch", what, joinKeys(got), k)
		}
		sameCustom(t, what+": "+k, g, w)
	}
	for k := range byKey {
		t.Fatalf("%s = %s: returned %s, which was never stored", what, joinKeys(got), k)
	}
}

// bounded runs call, failing t if it takes more than three times the
// stores' operation bound or allocates more than shapeAllocBound.
func bounded(t *testing.T, what string, call func() error) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	start := time.Now()
	err := call()
	took := time.Since(start)
	runtime.ReadMemStats(&after)
	if took > 3*shapeTimeout {
		t.Fatalf("%s took %v, with an operation bound of %v (err %v)", what, took.Round(time.Millisecond), shapeTimeout, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > shapeAllocBound {
		t.Fatalf("%s allocated %d MiB around releases of a few KiB (err %v)", what, grew>>20, err)
	}
	return err
}
