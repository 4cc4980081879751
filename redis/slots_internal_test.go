package redis

import (
	"context"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
)

// The slot of every key keySlot computes is the server's, and every slot's
// registry tag hashes to that slot: one CLUSTER KEYSLOT per slot, on a real
// Cluster node.
func TestSlotTagsAgreeWithTheServer(t *testing.T) {
	c, _, err := newClient(redisenv.SharedCluster(t), nil, &logSink{log: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	k := keys{prefix: "helmstore"}
	probe := []string{k.head("default", "sh.helm.release.v1.app.v1"), k.all("kube-system"), "no-tag", "{}empty", "a{}{b}", "x{y}z{w}"}
	tags := slotTags()
	cmds := make([]*goredis.IntCmd, 0, clusterSlots+len(probe))
	pipe := c.Pipeline()
	for s := range clusterSlots {
		cmds = append(cmds, pipe.ClusterKeySlot(ctx, k.slotRegistry(s)))
	}
	for _, p := range probe {
		cmds = append(cmds, pipe.ClusterKeySlot(ctx, p))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	for s := range clusterSlots {
		if got := cmds[s].Val(); got != int64(s) || keySlot(k.slotRegistry(s)) != s {
			t.Fatalf("the registry of slot %d (tag %q) is in slot %d by the server, %d by keySlot", s, tags[s], got, keySlot(k.slotRegistry(s)))
		}
	}
	for i, p := range probe {
		if got, want := keySlot(p), cmds[clusterSlots+i].Val(); int64(got) != want {
			t.Errorf("keySlot(%q) = %d, the server says %d", p, got, want)
		}
	}
}
