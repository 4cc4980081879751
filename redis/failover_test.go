package redis_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
)

// replicaOf returns the node of c replicating primary.
func replicaOf(t *testing.T, c *redisenv.Cluster, primary *redisenv.Node) *redisenv.Node {
	t.Helper()
	for _, n := range c.Nodes {
		if n == primary {
			continue
		}
		cl := n.Client()
		info, err := cl.Info(context.Background(), "replication").Result()
		cl.Close()
		if err == nil && strings.Contains(info, "master_port:"+strconv.Itoa(primary.Port)+"\r\n") {
			return n
		}
	}
	t.Fatalf("no replica of %s", primary.Addr)
	return nil
}

// A Cluster primary killed: its replica is promoted within seconds, and the
// same store follows the new topology as soon as the cluster has it — its
// first read after the kill succeeds within 30 s of the promotion (go-redis
// alone reloads the slot map once a minute). The times are logged:
// docs/redis.md ("Failover") quotes them.
func TestClusterFailoverPromptly(t *testing.T) {
	c := redisenv.StartCluster(t, 3, 1)
	ns := testenv.UniqueName("prompt-")
	s := openStore(t, withPrefix(t, c.URL()), helm3.WithTimeout(time.Minute)).Namespace(ns)
	defer s.Close()
	for v := 1; v <= 3; v++ {
		if err := upgrade(s, ns, "app", v); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.WaitReplicated(30 * time.Second); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	victim, err := c.NodeFor(ctx, "x{"+ns+"}")
	if err != nil {
		t.Fatal(err)
	}
	replica := replicaOf(t, c, victim)
	rc := replica.Client()
	defer rc.Close()

	killed := time.Now()
	victim.Kill()
	promoted := make(chan time.Duration, 1)
	go func() {
		for time.Since(killed) < 2*time.Minute {
			role, err := rc.Do(ctx, "ROLE").Slice()
			if err == nil && len(role) > 0 && role[0] == "master" {
				promoted <- time.Since(killed)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
		close(promoted)
	}()
	key := driver.MakeKey("app", 3)
	var first time.Duration
	var promotion time.Duration = -1
	var last error
	for attempts := 0; ; attempts++ {
		_, err := s.Get(key)
		if err == nil {
			first = time.Since(killed)
			break
		}
		if errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("Get during the failover: %v", err)
		}
		last = err
		select {
		case p, ok := <-promoted:
			if !ok {
				t.Fatal("the replica was not promoted within 2 minutes")
			}
			promotion = p
		default:
		}
		if promotion >= 0 && time.Since(killed) > promotion+30*time.Second {
			t.Fatalf("no read succeeded within 30 s of the promotion (%v after the kill; %d attempts): %v", promotion, attempts, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if promotion < 0 {
		promotion = <-promoted
	}
	// The store writes too.
	if err := s.Create(driver.MakeKey("app", 4), smallRelease("app", ns, 4, release.StatusDeployed)); err != nil {
		t.Fatalf("write after the failover: %v", err)
	}
	t.Logf("primary killed; replica promoted after %v; first successful read after %v (%v after the promotion); last error before: %v",
		promotion.Round(10*time.Millisecond), first.Round(10*time.Millisecond), (first - promotion).Round(10*time.Millisecond), last)
}
