package redis_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/redis"
)

// clusterNode is one primary of a Cluster, reached directly.
type clusterNode struct {
	n  *redisenv.Node
	c  *goredis.Client
	id string
}

// clusterPrimaries returns the primaries of c.
func clusterPrimaries(t *testing.T, c *redisenv.Cluster) []clusterNode {
	t.Helper()
	ctx := context.Background()
	var out []clusterNode
	for _, n := range c.Nodes {
		cl := n.Client()
		t.Cleanup(func() { cl.Close() })
		role, err := cl.Do(ctx, "ROLE").Slice()
		if err != nil {
			t.Fatal(err)
		}
		if role[0] != "master" {
			continue
		}
		id, err := cl.ClusterMyID(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, clusterNode{n, cl, id})
	}
	return out
}

// moveSlot moves slot from src to dst, all its keys at once, and tells
// every primary.
func moveSlot(t *testing.T, slot int, src, dst clusterNode, all []clusterNode) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(dst.c.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", src.id).Err())
	must(src.c.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dst.id).Err())
	host, port, _ := net.SplitHostPort(dst.n.Addr)
	for {
		keys, err := src.c.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		must(err)
		if len(keys) == 0 {
			break
		}
		args := []interface{}{"MIGRATE", host, port, "", 0, 10000, "REPLACE", "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		must(src.c.Do(ctx, args...).Err())
	}
	for _, m := range all {
		must(m.c.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dst.id).Err())
	}
}

// An all-namespaces read during a slot move finds the namespaces of that
// slot, whether it scans the primaries (the Cluster holds few keys) or
// reads the registry. The read is ordered against the move exactly: the
// read's request to the slot's old primary is held until the move is
// done, and the move starts only once the new primary has answered the
// read. (A scan of each primary for the namespaces' keys, trusted as it
// is, misses the namespace: the new primary was scanned before its keys
// arrived, the old one after they left.)
func TestClusterAllNamespacesDuringSlotMove(t *testing.T) {
	c := redisenv.StartCluster(t, 3, 0)
	t.Run("scan", func(t *testing.T) { allNamespacesDuringSlotMove(t, c) })
	t.Run("registry", func(t *testing.T) {
		defer redis.SetScanKeysMax(-1)()
		allNamespacesDuringSlotMove(t, c)
	})
}

func allNamespacesDuringSlotMove(t *testing.T, c *redisenv.Cluster) {
	conn := withPrefix(t, c.URL())
	prefix := prefixOf(t, conn)
	ctx := context.Background()
	prim := clusterPrimaries(t, c)
	proxies := map[string]*holdProxy{}
	for _, n := range c.Nodes {
		proxies[n.Addr] = newHoldProxy(t, n.Addr)
	}
	s, err := redis.OpenProxied(conn, func(addr string) string {
		if p, ok := proxies[addr]; ok {
			return p.Addr
		}
		return addr
	}, helm3.WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	ns := testenv.UniqueName("moving-")
	if err := upgrade(s.Namespace(ns), ns, "app", 1); err != nil {
		t.Fatal(err)
	}
	cc := c.Client()
	defer cc.Close()
	slot, err := cc.ClusterKeySlot(ctx, prefix+":{"+ns+"}:all").Result()
	if err != nil {
		t.Fatal(err)
	}
	var src, dst clusterNode
	for _, m := range prim {
		if m.c.Exists(ctx, prefix+":{"+ns+"}:all").Err() == nil {
			src = m
		}
	}
	for _, m := range prim {
		if m.id != src.id {
			dst = m
			break
		}
	}
	if src.c == nil || dst.c == nil {
		t.Fatal("no primary holds the namespace, or no other primary")
	}
	all := s.Namespace("")
	list := func() ([]*release.Release, error) {
		return all.List(func(*release.Release) bool { return true })
	}
	if rs, err := list(); err != nil || len(rs) != 1 {
		t.Fatalf("all-namespaces List before the move: %d releases, %v", len(rs), err)
	}

	reads := []string{"scan", "evalsha", "eval"} // the commands of a read across namespaces
	held := proxies[src.n.Addr].arm(true, reads...)
	answered := proxies[dst.n.Addr].arm(false, reads...)
	type result struct {
		rs  []*release.Release
		err error
	}
	done := make(chan result, 1)
	go func() {
		rs, err := list()
		done <- result{rs, err}
	}()
	for what, ch := range map[string]<-chan struct{}{"held on the old primary": held, "answered by the new primary": answered} {
		select {
		case <-ch:
		case r := <-done:
			t.Fatalf("the all-namespaces List ended (%d releases, %v) before its read was %s", len(r.rs), r.err, what)
		case <-time.After(30 * time.Second):
			t.Fatalf("the all-namespaces List's read was not %s within 30 s", what)
		}
	}
	moveSlot(t, int(slot), src, dst, prim)
	proxies[src.n.Addr].release()
	r := <-done
	if r.err != nil {
		t.Fatalf("all-namespaces List during the move: %v", r.err)
	}
	found := false
	for _, rel := range r.rs {
		found = found || (rel.Namespace == ns && rel.Name == "app")
	}
	if !found {
		t.Fatalf("the all-namespaces List during the move of slot %d misses namespace %s (%d releases)", slot, ns, len(r.rs))
	}
	if n, err := dst.c.ClusterCountKeysInSlot(ctx, int(slot)).Result(); err != nil || n == 0 {
		t.Fatalf("the new primary holds no key of slot %d (%v)", slot, err)
	}
	seenFromEverywhere(t, conn, ns, driver.MakeKey("app", 1), "after the move")
}

// In a Cluster, a primary that loses its data (FLUSHALL, a restart without
// persistence) loses its namespaces' part of the registry with their
// releases; the next write there restores both, and a fresh store's
// all-namespaces view finds it. A primary that loses its data alone does
// not hide the namespaces of the others.
func TestClusterRegistryPerPrimaryDataLoss(t *testing.T) {
	c := redisenv.StartCluster(t, 3, 0)
	conn := withPrefix(t, c.URL())
	prefix := prefixOf(t, conn)
	ctx := context.Background()
	prim := clusterPrimaries(t, c)
	// A namespace on each primary, each with a release of its own name.
	nsOf := map[string]string{}
	for i := 0; len(nsOf) < len(prim); i++ {
		cand := fmt.Sprintf("team-%d", i)
		for _, m := range prim {
			if _, ok := nsOf[m.id]; !ok && m.c.Exists(ctx, prefix+":{"+cand+"}:all").Err() == nil {
				nsOf[m.id] = cand
			}
		}
	}
	s := openStore(t, conn)
	defer s.Close()
	for _, ns := range nsOf {
		if err := upgrade(s.Namespace(ns), ns, "app-"+ns, 1); err != nil {
			t.Fatal(err)
		}
	}
	lost, kept := prim[0], prim[1]
	if err := lost.c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	seenFromEverywhere(t, conn, nsOf[kept.id], driver.MakeKey("app-"+nsOf[kept.id], 1), "after another primary lost its data")
	if err := upgrade(s.Namespace(nsOf[lost.id]), nsOf[lost.id], "app-"+nsOf[lost.id], 1); err != nil {
		t.Fatal(err)
	}
	seenFromEverywhere(t, conn, nsOf[lost.id], driver.MakeKey("app-"+nsOf[lost.id], 1), "after FLUSHALL of the namespace's primary")

	lost.n.Kill()
	if err := lost.n.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := c.WaitHealthy(60 * time.Second); err != nil {
		t.Fatal(err)
	}
	// The same store writes on: its first attempts may meet the restart.
	var err error
	for i := 0; i < 50; i++ {
		if err = upgrade(s.Namespace(nsOf[lost.id]), nsOf[lost.id], "app-"+nsOf[lost.id], 1); err == nil || !redis.IsUnavailable(err) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	seenFromEverywhere(t, conn, nsOf[lost.id], driver.MakeKey("app-"+nsOf[lost.id], 1), "after a restart of the namespace's primary without persistence")
	seenFromEverywhere(t, conn, nsOf[kept.id], driver.MakeKey("app-"+nsOf[kept.id], 1), "after a restart of another primary")
}

// A registry deleted behind the store's back, alone (by hand, a partial
// restore), never reads as no releases: the all-namespaces List,
// Summaries and Get of the store and of a fresh one find every namespace
// (by scanning for their sets of releases), on one server and in Cluster.
func TestRegistryDeleted(t *testing.T) {
	for name, base := range map[string]func(testing.TB) string{"Standalone": redisenv.URL, "Cluster": redisenv.SharedCluster} {
		t.Run(name, func(t *testing.T) {
			conn := withPrefix(t, base(t))
			s := openStore(t, conn)
			defer s.Close()
			want := map[string]string{"team-a": "app", "team-b": "db"}
			for ns, n := range want {
				if err := upgrade(s.Namespace(ns), ns, n, 1); err != nil {
					t.Fatal(err)
				}
			}
			admin := connClient(t, conn)
			defer admin.Close()
			for _, k := range redis.RegistryKeys(t, s, "team-a", "team-b") {
				if err := admin.Del(context.Background(), k).Err(); err != nil {
					t.Fatal(err)
				}
			}
			fresh := openStore(t, conn)
			defer fresh.Close()
			for _, v := range []helm3.Store{s, fresh} {
				all := v.Namespace("")
				list, err := all.List(func(*release.Release) bool { return true })
				if err != nil || names(list) != "app db" {
					t.Errorf("all-namespaces List with the registry deleted: %s, %v; want app and db", names(list), err)
				}
				p, err := all.Summaries(context.Background(), helm3.SummaryQuery{})
				if err != nil || len(p.Summaries) != 2 {
					t.Errorf("all-namespaces Summaries with the registry deleted: %+v, %v; want app and db", p.Summaries, err)
				}
				for ns, n := range want {
					if r, err := all.Get(driver.MakeKey(n, 1)); err != nil || r.Namespace != ns {
						t.Errorf("all-namespaces Get of %s/%s with the registry deleted: %v", ns, n, err)
					}
				}
			}
		})
	}
}
