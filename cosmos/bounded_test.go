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
	"github.com/helmstore/helmstore/internal/testing/castest"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// reshapeRun is the data one reshape runs on (castest.ReshapeData), in a
// namespace of its own: "large" (a chart of its own, in chunks), "app"
// and "web" sharing a small chart, and "up", a values-only upgrade of app
// (its values a delta against app's, embedded in its head). Cosmos DB
// keeps a head body of any size the suite writes inline: no ChunkedHead.
type reshapeRun struct {
	castest.ReshapeData
	large string // key
}

func newReshapeRun(t *testing.T, s helm3.Store, tp tamperer, ns string) reshapeRun {
	t.Helper()
	r := reshapeRun{ReshapeData: castest.ReshapeData{Namespace: ns, App: driver.MakeKey("app", 1)}, large: driver.MakeKey("large", 1)}
	web, upKey := driver.MakeKey("web", 1), driver.MakeKey("app", 2)
	v := s.Namespace(ns)
	up := smallRelease("app", ns, 2, release.StatusDeployed)
	up.Config["replicas"] = 7.0
	for _, c := range []struct {
		k   string
		rls *release.Release
	}{{r.large, fixture.LargeRelease("large", ns, 1)}, {r.App, smallRelease("app", ns, 1, release.StatusDeployed)},
		{web, smallRelease("web", ns, 1, release.StatusDeployed)}, {upKey, up}} {
		if err := v.Create(c.k, c.rls); err != nil {
			t.Fatal(err)
		}
		r.Keys = append(r.Keys, c.k)
		m, err := tp.read(context.Background(), headRef(ns, c.k))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"chart", "values", "manifest", "valuesBase", "manifestBase"} {
			d, _ := castest.JSONField(m, "h")[f].(string)
			r.Use(c.k, d)
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
	r.LargeChart, r.Shared, r.AppValues, r.UpValues = digest(r.large, "chart"), digest(r.App, "chart"), digest(r.App, "values"), digest(upKey, "values")
	if r.Shared != digest(web, "chart") {
		t.Fatal("app and web do not share their chart: the test tests nothing")
	}
	if _, _, err := tp.part(context.Background(), ns, r.UpValues); !errors.Is(err, cas.ErrNotFound) {
		t.Fatalf("app's upgrade has a values part item (%v): nothing is embedded, the test tests nothing", err)
	}
	return r
}

// checkDamaged checks, on a fresh store with no cache and a 30 s timeout,
// what the suite checks of such damage (castest.CheckDamaged).
func checkDamaged(t *testing.T, conn string, r castest.ReshapeData, damaged map[string]bool, what string) {
	t.Helper()
	const timeout = 30 * time.Second
	s, _ := openTest(t, conn, options{}, helm3.WithTimeout(timeout), helm3.WithCacheBytes(0))
	defer s.Close()
	castest.CheckDamaged(t, s.Namespace(r.Namespace), r.Keys, damaged, timeout, what)
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
		target := drivertest.Target{Namespace: r.Namespace, Part: r.LargeChart}
		if tc.head {
			target = drivertest.Target{Namespace: r.Namespace, Key: r.large}
		}
		what, err := tp.Reshape(context.Background(), target, tc.shape, 0)
		if err != nil {
			t.Fatal(err)
		}
		checkDamaged(t, conn, r.ReshapeData, map[string]bool{r.large: true}, what)
	}
}

// TestReshaper runs castest.ReshapeAll: every variant of every shape the
// tamperer has, on a head, a part shared by two releases, a chunked part
// of one release and a values part of one release (embedded in its head),
// each on data of its own, checked as the suite checks such damage
// (checkDamaged).
func TestReshaper(t *testing.T) {
	conn := connString(t)
	w, b := openTest(t, conn, options{})
	defer w.Close()
	tp := newTamperer(b)
	n := castest.ReshapeAll(t, tp, func(n int) castest.ReshapeData {
		return newReshapeRun(t, w, tp, fmt.Sprintf("reshape-%d", n)).ReshapeData
	}, func(d castest.ReshapeData, damaged map[string]bool, what string) {
		checkDamaged(t, conn, d, damaged, what)
	}, nil)
	t.Logf("%d reshapes checked", n)
}
