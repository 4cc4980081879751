package cosmos

import (
	"context"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/driver/drivertest"
)

// TestRoundTrips counts the HTTP round trips (and the request charge, where
// the server reports it) of each Helm operation on a ~2 MB release, with
// warm part caches as a long-running Helm client has them, and checks the
// issue's bounds: Create <= 1 + new parts, Get <= 2, History <= 2.
func TestRoundTrips(t *testing.T) {
	var c Counter
	s, b := openTest(t, connString(t), options{counter: &c})
	defer s.Close()
	ns := s.Namespace("rt")
	key := func(v int) string { return backend.MakeKey("app", v) }
	rel := func(v int) *release.Release { return drivertest.ValuesOnlyRelease("app", "rt", v) }
	measure := func(what string, max int64, fn func() error) int64 {
		t.Helper()
		b.WaitCommits()
		c.Reset()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		n := c.RoundTrips()
		b.WaitCommits()
		t.Logf("%-32s %3d round trips (+%d for the background commit), %.1f RU", what, n, c.RoundTrips()-n, c.RequestCharge())
		if max > 0 && n > max {
			t.Errorf("%s took %d round trips, want at most %d", what, n, max)
		}
		return n
	}
	measure("install (Create v1)", 0, func() error { return ns.Create(key(1), rel(1)) })
	for v := 2; v <= 3; v++ {
		r := rel(v)
		// A values-only upgrade: the head, 2 new parts (values, manifest
		// delta), and the 3 existing parts it references (chart, the bases
		// of the deltas) gain it as referrer (one patch each).
		measure("upgrade: Create", 1+2+3, func() error { return ns.Create(key(v), r) })
		prev := rel(v - 1)
		prev.Info.Status = release.StatusSuperseded
		measure("upgrade: Update previous", 0, func() error { return ns.Update(key(v-1), prev) })
	}
	measure("Get (cold: parts not cached)", 0, func() error { _, err := ns.Get(key(3)); return err })
	measure("Get", 2, func() error { _, err := ns.Get(key(3)); return err })
	measure("History (cold)", 0, func() error {
		_, err := ns.Query(map[string]string{"name": "app", "owner": "helm"})
		return err
	})
	measure("History", 2, func() error {
		_, err := ns.Query(map[string]string{"name": "app", "owner": "helm"})
		return err
	})
	measure("Deployed (Query name+status)", 2, func() error {
		_, err := ns.Query(map[string]string{"name": "app", "owner": "helm", "status": "deployed"})
		return err
	})
	measure("List (namespace)", 0, func() error {
		_, err := ns.List(func(*release.Release) bool { return true })
		return err
	})
	measure("List (all namespaces)", 0, func() error {
		_, err := s.Namespace("").List(func(*release.Release) bool { return true })
		return err
	})
	measure("Delete oldest", 0, func() error { _, err := ns.Delete(key(1)); return err })
	st, err := ns.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stats: %+v", st)
	_ = driver.Stats{}
	checkSizes(t)
}
