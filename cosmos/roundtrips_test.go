package cosmos

import (
	"context"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// TestRoundTrips counts the HTTP round trips (requests), the sequential
// steps they take, and the request charge (where the server reports it)
// of each Helm operation on a ~2 MB release, with warm part caches as a
// long-running Helm client has them, and fails if any grows past what it
// is today (Get and History: 1, within the 2; a values-only
// upgrade's Create: 4 requests in 2 steps, one over the 1 + new
// parts = 3 requests: see docs/cosmos.md, "Round trips per Helm operation").
func TestRoundTrips(t *testing.T) {
	var c counter
	conn := connString(t)
	s, b := openTest(t, conn, options{counter: &c})
	defer s.Close()
	ns := s.Namespace("rt")
	key := func(v int) string { return driver.MakeKey("app", v) }
	rel := func(v int) *release.Release { return fixture.ValuesOnlyRelease("app", "rt", v) }
	// measure runs fn and checks its round trips (requests) and
	// sequential steps (requests in flight together count once) against
	// what they are today: the test fails if either grows (0: not
	// checked). Steps are checked only where every request after the
	// first is sent at once: where parallel chains of unequal length run
	// (a chunked part beside an inline one), a request of the longer
	// chain sent after the shorter one finished counts one deeper, so the
	// figure is an upper bound that varies from run to run.
	measure := func(what string, maxTrips int64, maxSteps int, fn func() error) (steps int) {
		t.Helper()
		castest.WaitCommits(b)
		c.Reset()
		if err := fn(); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		n := c.RoundTrips()
		steps = c.Steps()
		castest.WaitCommits(b)
		t.Logf("| %-30s | %3d | %2d | +%d | %5.1f |", what, n, steps, c.RoundTrips()-n, c.RequestCharge())
		if maxTrips > 0 && n > maxTrips {
			t.Errorf("%s took %d round trips, want at most %d", what, n, maxTrips)
		}
		if maxSteps > 0 && steps > maxSteps {
			t.Errorf("%s took %d sequential steps, want at most %d", what, steps, maxSteps)
		}
		return steps
	}
	t.Logf("| operation | requests | sequential steps | background commit | RU (test server) |")
	// Every write of a store without encryption keys also reads the
	// namespace's keyring record, while it encodes the release
	// (internal/engine/plaintext.go): the +1s below.
	measure("install (Create v1)", 9+1, 0, func() error { return ns.Create(key(1), rel(1)) })
	createSteps := 99
	for v := 2; v <= 4; v++ {
		r := rel(v)
		// A values-only upgrade: the head, embedding its 2 new parts
		// (the values and manifest deltas), then at once a referrer
		// patch on each of the 3 existing parts it references (chart,
		// the bases of the deltas): 4 requests in 2 steps. The steps
		// are checked on the fewest of three upgrades: a request sent
		// late by a busy machine, after another of its step was
		// answered, counts one step deeper.
		createSteps = min(createSteps, measure("upgrade: Create", 1+3+1, 0, func() error { return ns.Create(key(v), r) }))
		prev := rel(v - 1)
		prev.Info.Status = release.StatusSuperseded
		measure("upgrade: Update previous", 1+1, 2, func() error { return ns.Update(key(v-1), prev) })
	}
	if createSteps > 3 {
		t.Errorf("a values-only upgrade's Create took %d sequential steps at best, want 3 (the keyring record's read, then 2)", createSteps)
	}
	measure("Get (cold: parts not cached)", 6, 0, func() error { _, err := ns.Get(key(4)); return err })
	measure("Get", 1, 1, func() error { _, err := ns.Get(key(4)); return err })
	// The Get above cached the keyframes and the chart; the deltas are
	// embedded in the heads: one query.
	measure("History (4 revisions, after a cold Get)", 1, 1, func() error {
		_, err := ns.Query(map[string]string{"name": "app", "owner": "helm"})
		return err
	})
	// A store with nothing cached (another process, or the cache off):
	// the heads, then the chart and the values and manifest keyframes
	// (one query per kind), then the chunks of the chunked ones.
	cold, _ := openTest(t, conn, options{counter: &c}, helm3.WithCacheBytes(0))
	defer cold.Close()
	measure("History (cold, 4 revisions)", 6, 0, func() error {
		_, err := cold.Namespace("rt").Query(map[string]string{"name": "app", "owner": "helm"})
		return err
	})
	measure("History", 1, 1, func() error {
		_, err := ns.Query(map[string]string{"name": "app", "owner": "helm"})
		return err
	})
	measure("Deployed (Query name+status)", 1, 1, func() error {
		_, err := ns.Query(map[string]string{"name": "app", "owner": "helm", "status": "deployed"})
		return err
	})
	measure("List (namespace)", 1, 1, func() error {
		_, err := ns.List(func(*release.Release) bool { return true })
		return err
	})
	measure("List (all namespaces)", 1, 1, func() error {
		_, err := s.Namespace("").List(func(*release.Release) bool { return true })
		return err
	})
	measure("Delete oldest", 12, 0, func() error { _, err := ns.Delete(key(1)); return err })
	st, err := ns.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("stats: %+v", st)
	_ = helm3.Stats{}
	checkSizes(t)
}

// TestConnectionsReused checks that the store keeps its connections open
// across requests, as it will on Azure, where each new connection costs a
// TCP connect and a TLS handshake (two round trips or more that
// TestRoundTrips does not count): 20 cold Gets and 20 cold History reads
// (5 requests each, some at once) may open no more connections than the
// store sends requests at once. The test server, started with keep-alive
// by tools/cosmos-server/serve.js, holds them open; a client that did not
// (a response body left unread, keep-alive off, a transport per request)
// would open one per request.
func TestConnectionsReused(t *testing.T) {
	var c counter
	s, b := openTest(t, connString(t), options{counter: &c}, helm3.WithCacheBytes(0))
	defer s.Close()
	ns := s.Namespace("conns")
	for v := 1; v <= 3; v++ {
		if err := ns.Create(driver.MakeKey("app", v), fixture.ValuesOnlyRelease("app", "conns", v)); err != nil {
			t.Fatal(err)
		}
	}
	castest.WaitCommits(b)
	c.Reset()
	for range 20 {
		if _, err := ns.Get(driver.MakeKey("app", 3)); err != nil {
			t.Fatal(err)
		}
		if rs, err := ns.Query(map[string]string{"name": "app", "owner": "helm"}); err != nil || len(rs) != 3 {
			t.Fatalf("History: %d releases, %v", len(rs), err)
		}
	}
	opened, sent := c.Connections(), c.RoundTrips()
	t.Logf("%d requests on %d new connections", sent, opened)
	if limit := int64(cas.DefaultWorkers); opened > limit {
		t.Errorf("%d requests opened %d connections, want at most %d (the requests sent at once): connections are not reused", sent, opened, limit)
	}
}

// TestCreateBound checks the bound, Create ≤ 1 + new parts
// requests, on the benchmarks' release (fixture.Stack, shaped like
// kube-prometheus-stack): a values-only upgrade adds two parts (the user
// values, a few hundred bytes, and the manifest delta), both embedded in the
// head, and references two existing ones (the chart and the manifest
// keyframe), which gain it as referrer: 3 requests in 2 steps, then the
// commit in the background. (With user values too large to embed whole,
// their delta's keyframe takes a fourth: TestRoundTrips.)
func TestCreateBound(t *testing.T) {
	var c counter
	s, b := openTest(t, connString(t), options{counter: &c})
	defer s.Close()
	ns := s.Namespace("bound")
	rs := fixture.StackRevisions("app", "bound", 4)
	for _, r := range rs[:2] {
		if err := ns.Create(driver.MakeKey("app", r.Version), r); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rs[2:] {
		castest.WaitCommits(b)
		c.Reset()
		if err := ns.Create(driver.MakeKey("app", r.Version), r); err != nil {
			t.Fatal(err)
		}
		n, steps := c.RoundTrips(), c.Steps()
		t.Logf("values-only Create of v%d: %d requests in %d steps", r.Version, n, steps)
		if n > 4 || steps > 3 {
			t.Errorf("values-only Create of v%d: %d requests in %d steps, want at most 1 + 2 new parts + the keyring record's read = 4, in 3", r.Version, n, steps)
		}
		got, err := ns.Get(driver.MakeKey("app", r.Version))
		if err != nil || got.Config["prometheus"] == nil || len(got.Chart.Templates) != len(r.Chart.Templates) {
			t.Fatalf("v%d read back: %v", r.Version, err)
		}
	}
}
