package cosmos

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/castest"
	"github.com/helmstore/helmstore/internal/fixture"
)

// reshapeRun is the data one reshape runs on, in a namespace of its own:
// "large" (a chart of its own, in chunks), "app" and "web" sharing a
// small chart, and "up", a values-only upgrade of app (its values a delta
// against app's, embedded in its head). uses names, for every digest, the
// releases whose heads reference it (bases included).
type reshapeRun struct {
	ns                  string
	large, app, web, up string // keys
	largeChart, shared  string // digests
	appValues, upValues string
	uses                map[string]map[string]bool
}

func newReshapeRun(t *testing.T, s helm3.Store, tp tamperer, ns string) reshapeRun {
	t.Helper()
	r := reshapeRun{ns: ns, large: driver.MakeKey("large", 1), app: driver.MakeKey("app", 1), web: driver.MakeKey("web", 1),
		up: driver.MakeKey("app", 2), uses: map[string]map[string]bool{}}
	v := s.Namespace(ns)
	up := smallRelease("app", ns, 2, release.StatusDeployed)
	up.Config["replicas"] = 7.0
	for _, c := range []struct {
		k   string
		rls *release.Release
	}{{r.large, fixture.LargeRelease("large", ns, 1)}, {r.app, smallRelease("app", ns, 1, release.StatusDeployed)},
		{r.web, smallRelease("web", ns, 1, release.StatusDeployed)}, {r.up, up}} {
		if err := v.Create(c.k, c.rls); err != nil {
			t.Fatal(err)
		}
		m, err := tp.read(context.Background(), headRef(ns, c.k))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"chart", "values", "manifest", "valuesBase", "manifestBase"} {
			if d, _ := castest.JSONField(m, "h")[f].(string); d != "" {
				if r.uses[d] == nil {
					r.uses[d] = map[string]bool{}
				}
				r.uses[d][c.k] = true
			}
		}
	}
	digest := func(k, f string) string {
		m, err := tp.read(context.Background(), headRef(ns, k))
		if err != nil {
			t.Fatal(err)
		}
		d, _ := castest.JSONField(m, "h")[f].(string)
		return d
	}
	r.largeChart, r.shared, r.appValues, r.upValues = digest(r.large, "chart"), digest(r.app, "chart"), digest(r.app, "values"), digest(r.up, "values")
	if r.shared != digest(r.web, "chart") {
		t.Fatal("app and web do not share their chart: the test tests nothing")
	}
	if _, _, err := tp.part(context.Background(), ns, r.upValues); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("app's upgrade has a values part item (%v): nothing is embedded, the test tests nothing", err)
	}
	return r
}

// checkDamaged checks, on a fresh store with no cache and a 30 s timeout,
// what the suite checks of such damage (castest.CheckDamaged).
func checkDamaged(t *testing.T, conn string, r reshapeRun, damaged map[string]bool, what string) {
	t.Helper()
	const timeout = 30 * time.Second
	s, _ := openTest(t, conn, options{}, helm3.WithTimeout(timeout), helm3.WithCacheBytes(0))
	defer s.Close()
	castest.CheckDamaged(t, s.Namespace(r.ns), []string{r.large, r.app, r.web, r.up}, damaged, timeout, what)
}

// TestRecordedCountsBounded: a chunked chart part whose item claims 2^30
// chunks (or a frame of 2^40 bytes), and a head claiming its body is in
// 2^30 chunks, make a fresh store's Get ErrCorrupt for that release only,
// promptly and with memory bounded, and the release stays deletable.
// Before reads were bounded by the recorded sizes, a count of 2^30 made
// Get allocate without bound (names for every chunk claimed) and ignore
// WithTimeout(30s).
func TestRecordedCountsBounded(t *testing.T) {
	conn := connString(t)
	w, b := openTest(t, conn, options{})
	defer w.Close()
	tp := newTamperer(b)
	for i, tc := range []struct {
		shape drivertest.Shape
		head  bool
	}{{drivertest.HugeCount, false}, {drivertest.HugeSize, false}, {drivertest.HugeCount, true}, {drivertest.HugeSize, true}} {
		r := newReshapeRun(t, w, tp, fmt.Sprintf("bounded-%d", i))
		target := drivertest.Target{Namespace: r.ns, Part: r.largeChart}
		if tc.head {
			target = drivertest.Target{Namespace: r.ns, Key: r.large}
		}
		what, err := tp.Reshape(context.Background(), target, tc.shape, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkDamaged(t, conn, r, map[string]bool{r.large: true}, what)
	}
}

// TestReshaper applies every variant of every shape the tamperer has to a
// head, a part shared by two releases, a chunked part of one release and a
// values part of one release (embedded in its head), each on data of its
// own, and checks what the suite checks of such damage (checkDamaged).
func TestReshaper(t *testing.T) {
	conn := connString(t)
	w, b := openTest(t, conn, options{})
	defer w.Close()
	tp := newTamperer(b)
	n := 0
	for _, shape := range drivertest.Shapes {
		for _, tc := range []struct {
			name   string
			target func(r reshapeRun) drivertest.Target
		}{
			{"head", func(r reshapeRun) drivertest.Target { return drivertest.Target{Namespace: r.ns, Key: r.app} }},
			{"shared-part", func(r reshapeRun) drivertest.Target { return drivertest.Target{Namespace: r.ns, Part: r.shared} }},
			{"chunked-part", func(r reshapeRun) drivertest.Target { return drivertest.Target{Namespace: r.ns, Part: r.largeChart} }},
			{"values-part", func(r reshapeRun) drivertest.Target { return drivertest.Target{Namespace: r.ns, Part: r.appValues} }},
			{"embedded-part", func(r reshapeRun) drivertest.Target { return drivertest.Target{Namespace: r.ns, Part: r.upValues} }},
		} {
			for i := 0; ; i++ {
				r := newReshapeRun(t, w, tp, fmt.Sprintf("reshape-%d", n))
				n++

				target := tc.target(r)
				what, err := tp.Reshape(context.Background(), target, shape, i)
				if errors.Is(err, drivertest.ErrNoVariant) {
					break
				}
				if err != nil {
					t.Fatalf("%s %s %d: %v", shape, tc.name, i, err)
				}
				damaged := r.uses[target.Part]
				if target.Key != "" {
					damaged = map[string]bool{target.Key: true}
				}
				checkDamaged(t, conn, r, damaged, fmt.Sprintf("%s %s: %s", shape, tc.name, what))
			}
		}
	}
	t.Logf("%d reshapes checked", n)
}
