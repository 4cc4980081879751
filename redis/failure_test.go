package redis_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/redis"
)

// revisions checks that the revisions of name are 1..n, each whole (its own
// values and manifest, its chart), and returns n.
func revisions(t testing.TB, s helm3.Store, ns, name string) int {
	t.Helper()
	rs, err := s.Query(map[string]string{"name": name, "owner": "helm"})
	if errors.Is(err, helm3.ErrReleaseNotFound) {
		return 0
	}
	if err != nil {
		t.Fatalf("revisions of %s/%s: %v", ns, name, err)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Version < rs[j].Version })
	for i, r := range rs {
		want := smallRelease(name, ns, r.Version, r.Info.Status)
		if r.Version != i+1 || r.Config["revision"] != float64(r.Version) || r.Manifest != want.Manifest || r.Chart == nil {
			t.Fatalf("revisions of %s/%s: revision %d (at %d) is not whole: values %v", ns, name, r.Version, i+1, r.Config)
		}
	}
	return len(rs)
}

// upgraders runs n writers, writer w upgrading release app-w from revision
// from[w]+1 on, until stop is closed or a write fails. It returns, per
// writer, the last revision whose upgrade was acknowledged, and the error
// that stopped it.
func upgraders(s helm3.Store, ns string, from []int, stop <-chan struct{}) (acked []int, errs []error, wait func()) {
	acked = append([]int(nil), from...)
	errs = make([]error, len(from))
	var wg sync.WaitGroup
	for w := range from {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for v := from[w] + 1; ; v++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := upgrade(s, ns, fmt.Sprintf("app-%d", w), v); err != nil {
					errs[w] = err
					return
				}
				acked[w] = v
			}
		}(w)
	}
	return acked, errs, wg.Wait
}

// checkOutageError fails t for an error a write may not return when the
// server goes away: anything but unavailability (or, for a Create whose
// reply was lost and that go-redis sent again, "exists").
func checkOutageError(t testing.TB, err error) {
	t.Helper()
	if err == nil || redis.IsUnavailable(err) || errors.Is(err, helm3.ErrReleaseExists) {
		return
	}
	t.Errorf("write during the outage: %v; want unavailable", err)
}

// A standalone server (AOF, fsync always) killed while releases are
// upgraded and restarted: the store recovers without being reopened, every
// acknowledged revision is there and whole, and reads during the outage are
// unavailable, never "not found".
func TestStandaloneRestart(t *testing.T) {
	n := redisenv.StartNode(t, "--appendonly", "yes", "--appendfsync", "always")
	ns := "restart"
	s := openStore(t, "redis://"+n.Addr+"/0?dial_timeout=1s").Namespace(ns)
	defer s.Close()
	const writers = 4
	from := make([]int, writers)
	for w := range from {
		for v := 1; v <= 2; v++ {
			if err := upgrade(s, ns, fmt.Sprintf("app-%d", w), v); err != nil {
				t.Fatal(err)
			}
		}
		from[w] = 2
	}
	stop := make(chan struct{})
	acked, errs, wait := upgraders(s, ns, from, stop)
	time.Sleep(300 * time.Millisecond)
	n.Kill()
	if _, err := s.Get("sh.helm.release.v1.app-0.v1"); err == nil || errors.Is(err, helm3.ErrReleaseNotFound) || !redis.IsUnavailable(err) {
		t.Errorf("Get while the server is down: %v, want unavailable", err)
	}
	close(stop)
	wait()
	for _, err := range errs {
		checkOutageError(t, err)
	}
	if err := n.Restart(); err != nil {
		t.Fatal(err)
	}
	for w := range from {
		name := fmt.Sprintf("app-%d", w)
		got := revisions(t, s, ns, name)
		if got < acked[w] {
			t.Errorf("%s: %d revisions after the restart, but %d were acknowledged", name, got, acked[w])
		}
		// The same store writes again: Helm would upgrade from what it
		// finds.
		if err := s.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, got+1), smallRelease(name, ns, got+1, release.StatusDeployed)); err != nil {
			t.Errorf("%s: write after the restart: %v (server running: %v)", name, err, n.Running())
		}
	}
	t.Logf("acknowledged before the kill: %v", acked)
}

// A Cluster primary (with a replica each) killed while releases in its
// slot are upgraded: the replica takes over, the store follows without
// being reopened, what was replicated before the kill is all there, every
// revision left is whole, and writes succeed again. Writes during the
// failover succeed once the replica is promoted, or fail as unavailable.
func TestClusterFailover(t *testing.T) {
	c := redisenv.StartCluster(t, 3, 1)
	ns := testenv.UniqueName("failover-")
	s := openStore(t, withPrefix(t, c.URL())).Namespace(ns)
	defer s.Close()
	const writers = 4
	from := make([]int, writers)
	for w := range from {
		for v := 1; v <= 3; v++ {
			if err := upgrade(s, ns, fmt.Sprintf("app-%d", w), v); err != nil {
				t.Fatal(err)
			}
		}
		from[w] = 3
	}
	if err := c.WaitReplicated(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	victim, err := c.NodeFor(context.Background(), "x{"+ns+"}")
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	_, errs, wait := upgraders(s, ns, from, stop)
	time.Sleep(200 * time.Millisecond)
	victim.Kill()
	// Reads during the failover: the release or unavailability, never
	// "not found" for what was replicated.
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err := s.Get("sh.helm.release.v1.app-0.v1")
		if err == nil {
			break
		}
		if errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("Get during the failover: %v", err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store did not recover within a minute: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := c.WaitHealthy(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	close(stop)
	wait()
	for _, err := range errs {
		// The store rides the failover out, so a writer goes on past
		// it: a revision the dead primary acknowledged but had not
		// replicated is gone (Redis replicates asynchronously), and the
		// Update superseding it finds nothing.
		if !errors.Is(err, helm3.ErrReleaseNotFound) {
			checkOutageError(t, err)
		}
	}
	for w := range from {
		name := fmt.Sprintf("app-%d", w)
		got := survivors(t, s, ns, name)
		for v := 1; v <= from[w]; v++ {
			if !got[v] {
				t.Errorf("%s: revision %d, replicated before the failover, is gone", name, v)
			}
		}
		last := 0
		for v := range got {
			last = max(last, v)
		}
		if err := s.Create(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, last+1), smallRelease(name, ns, last+1, release.StatusDeployed)); err != nil {
			t.Errorf("%s: write after the failover: %v", name, err)
		}
	}
}

// survivors checks that every stored revision of name is whole and returns
// their versions: revisions acknowledged but not replicated before a
// failover may be missing, so versions need not follow each other.
func survivors(t testing.TB, s helm3.Store, ns, name string) map[int]bool {
	t.Helper()
	rs, err := s.Query(map[string]string{"name": name, "owner": "helm"})
	if err != nil && !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("revisions of %s/%s: %v", ns, name, err)
	}
	out := map[int]bool{}
	for _, r := range rs {
		want := smallRelease(name, ns, r.Version, r.Info.Status)
		if r.Config["revision"] != float64(r.Version) || r.Manifest != want.Manifest || r.Chart == nil {
			t.Fatalf("revisions of %s/%s: revision %d is not whole: values %v", ns, name, r.Version, r.Config)
		}
		out[r.Version] = true
	}
	return out
}

// rediss:// with the private CA: the store works; without it (system
// roots) Open fails as unavailable, not as anything else.
func TestTLS(t *testing.T) {
	n, ca := redisenv.StartTLS(t)
	conn := "rediss://" + n.Addr + "/0?tls_ca_file=" + ca
	s := openStore(t, withPrefix(t, conn))
	defer s.Close()
	for v := 1; v <= 3; v++ {
		if err := upgrade(s, "default", "app", v); err != nil {
			t.Fatal(err)
		}
	}
	if n := history(t, s, "default", "app"); n != 3 {
		t.Fatalf("%d revisions over TLS, want 3", n)
	}
	_, err := helm3.Open(context.Background(), redis.Name, "rediss://"+n.Addr+"/0")
	if err == nil || !redis.IsUnavailable(err) {
		t.Fatalf("Open without the CA: %v, want a certificate failure (unavailable)", err)
	}
	_, err = helm3.Open(context.Background(), redis.Name, "rediss://"+n.Addr+"/0?tls_ca_file="+testenv.OtherCA(t))
	if err == nil {
		t.Fatal("Open trusting another CA succeeded")
	}
	// Plain redis:// to the TLS port fails too.
	_, err = helm3.Open(context.Background(), redis.Name, "redis://"+n.Addr+"/0?dial_timeout=2s&read_timeout=2s")
	if err == nil {
		t.Fatal("Open without TLS of a TLS-only server succeeded")
	}
}
