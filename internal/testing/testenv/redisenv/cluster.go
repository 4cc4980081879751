package redisenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// ClusterEnv names a Redis Cluster for tests: its node addresses,
// comma-separated (host:port,host:port,...).
const ClusterEnv = "HELMSTORE_TEST_REDIS_CLUSTER"

// Cluster is a Redis Cluster of private redis-server processes on
// loopback ports, each in its own temporary directory.
type Cluster struct {
	// Nodes in the order started: the primaries first, then the replicas
	// (as redis-cli --cluster create assigns them; a failover changes
	// the roles, see Primaries).
	Nodes []*Node
}

// URL returns a connection string naming every node.
func (c *Cluster) URL() string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return "redis://" + strings.Join(addrs, ",")
}

// Client returns a go-redis Cluster client over the nodes.
func (c *Cluster) Client() *goredis.ClusterClient {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: addrs})
}

// NodeFor returns the node currently serving key's slot as primary.
func (c *Cluster) NodeFor(ctx context.Context, key string) (*Node, error) {
	for _, n := range c.Nodes {
		cl := n.Client()
		role, err := cl.Do(ctx, "ROLE").Slice()
		if err != nil || len(role) == 0 || role[0] != "master" {
			cl.Close()
			continue
		}
		err = cl.Do(ctx, "EXISTS", key).Err()
		cl.Close()
		if err == nil {
			return n, nil
		}
	}
	return nil, fmt.Errorf("no primary serves %q", key)
}

var sharedCluster testenv.Shared[string]

// SharedCluster returns the connection string of a Redis Cluster the
// tests of this process share (each keeping to its own key prefix): the one
// in HELMSTORE_TEST_REDIS_CLUSTER, else three primaries started here.
func SharedCluster(t testing.TB) string {
	t.Helper()
	return sharedCluster.Get(t, "Redis Cluster", func() (string, error) {
		if a := os.Getenv(ClusterEnv); a != "" {
			return "redis://" + a, nil
		}
		c, err := startRedisCluster(3, 0)
		if err != nil {
			return "", err
		}
		return c.URL(), nil
	})
}

// StartCluster starts a private cluster of primaries, each with
// replicas replicas, stopped when t ends.
func StartCluster(t testing.TB, primaries, replicas int) *Cluster {
	t.Helper()
	c, err := startRedisCluster(primaries, replicas)
	if err != nil {
		testenv.Unavailable(t, "Redis Cluster", err)
	}
	t.Cleanup(func() {
		for _, n := range c.Nodes {
			n.Kill()
		}
	})
	return c
}

func startRedisCluster(primaries, replicas int) (*Cluster, error) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		return nil, errors.New("redis-cli is not installed (Debian's redis-tools; `make test` installs redis-server, which brings it)")
	}
	c := &Cluster{}
	fail := func(err error) (*Cluster, error) {
		for _, n := range c.Nodes {
			n.Kill()
		}
		return nil, err
	}
	for i := 0; i < primaries*(1+replicas); i++ {
		n, err := startRedisNode([]string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", "2000", "--appendonly", "no"})
		if err != nil {
			return fail(err)
		}
		c.Nodes = append(c.Nodes, n)
	}
	args := []string{"--cluster", "create"}
	for _, n := range c.Nodes {
		args = append(args, n.Addr)
	}
	args = append(args, "--cluster-replicas", fmt.Sprint(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("redis-cli %s: %v: %s", strings.Join(args, " "), err, testenv.Tail(out, 1500)))
	}
	if err := c.WaitHealthy(60 * time.Second); err != nil {
		return fail(err)
	}
	return c, nil
}

// WaitHealthy waits until every running node reports cluster_state:ok and
// every slot served, and each replica has finished its initial sync.
func (c *Cluster) WaitHealthy(d time.Duration) error {
	deadline := time.Now().Add(d)
	var last string
	for time.Now().Before(deadline) {
		ok := true
		for _, n := range c.Nodes {
			if !n.Running() {
				continue
			}
			cl := n.Client()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			info, err := cl.ClusterInfo(ctx).Result()
			repl, rerr := cl.Info(ctx, "replication").Result()
			cancel()
			cl.Close()
			if err != nil || rerr != nil {
				ok, last = false, fmt.Sprintf("%s: %v %v", n.Addr, err, rerr)
				break
			}
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
				ok, last = false, n.Addr+": "+strings.ReplaceAll(info, "\r\n", " ")
				break
			}
			if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
				ok, last = false, n.Addr+": replica not in sync"
				break
			}
		}
		if ok {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the Redis Cluster did not become healthy: %s", testenv.Tail([]byte(last), 600))
}

// WaitReplicated waits until every running replica has applied everything
// its primary has (replication offsets equal), so a primary can be killed
// without losing what was written before.
func (c *Cluster) WaitReplicated(d time.Duration) error {
	return waitReplicated(c.Nodes, d)
}

// waitReplicated waits until every running replica among nodes has applied
// everything its primary has.
func waitReplicated(nodes []*Node, d time.Duration) error {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		behind := ""
		for _, n := range nodes {
			if !n.Running() {
				continue
			}
			cl := n.Client()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			repl, err := cl.Info(ctx, "replication").Result()
			cancel()
			cl.Close()
			if err != nil {
				behind = err.Error()
				break
			}
			if !strings.Contains(repl, "role:master") {
				continue
			}
			var own string
			for _, line := range strings.Split(repl, "\r\n") {
				if v, ok := strings.CutPrefix(line, "master_repl_offset:"); ok {
					own = v
				}
			}
			for _, line := range strings.Split(repl, "\r\n") {
				if strings.HasPrefix(line, "slave") && strings.Contains(line, "offset=") && !strings.Contains(line, "offset="+own+",") {
					behind = n.Addr + ": " + line
				}
			}
		}
		if behind == "" {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return errors.New("replicas did not catch up with their primaries")
}
