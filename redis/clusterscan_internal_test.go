package redis

import (
	"context"
	"slices"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
)

// On a Cluster at rest that holds few keys, a read across namespaces
// trusts its scan of the primaries for the registry's keys; while a slot is being moved (its
// source MIGRATING, its target IMPORTING, before any key moved) it does
// not, and reads the registry, which finds the same namespaces.
func TestScanNamespacesTrustedOnlyAtRest(t *testing.T) {
	c := redisenv.StartCluster(t, 3, 0)
	ctx := context.Background()
	cfg := helm3.NewConfig(Name, c.URL()+"?key_prefix=scan-test")
	rb, err := Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := helm3.New(rb, cfg)
	defer s.Close()
	b := backendOf(t, s)
	cc := b.c.(*goredis.ClusterClient)
	want := []string{"alpha", "beta", "gamma", "delta"}
	for _, ns := range want {
		if err := s.Namespace(ns).Create("sh.helm.release.v1.app.v1", &release.Release{Name: "app", Namespace: ns, Version: 1, Info: &release.Info{Status: release.StatusDeployed}}); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	read := func(what string, trusted bool) {
		t.Helper()
		owners, rest, err := b.slotOwners(ctx, cc)
		if err != nil || len(rest) != 0 {
			t.Fatalf("%s: slot owners: %v, %d slots without one", what, err, len(rest))
		}
		regs, ok := b.scanRegistries(ctx, owners)
		if ok != trusted {
			t.Fatalf("%s: the scan was trusted: %v, want %v", what, ok, trusted)
		}
		if ok {
			got, err := b.readRegistries(ctx, nil, regs)
			if got = sortedUnique(got); err != nil || !slices.Equal(got, want) {
				t.Fatalf("%s: the scan found %v (%v), want %v", what, got, err, want)
			}
		}
		all, err := b.namespaces(ctx, "")
		if err != nil || !slices.Equal(all, want) {
			t.Fatalf("%s: namespaces %v, %v; want %v", what, all, err, want)
		}
	}
	read("at rest", true)

	slot := keySlot(b.k.all("alpha"))
	src, err := cc.MasterForKey(ctx, b.k.all("alpha"))
	if err != nil {
		t.Fatal(err)
	}
	var dst *goredis.Client
	_ = cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
		if m.Options().Addr != src.Options().Addr && dst == nil {
			dst = m
		}
		return nil
	})
	srcID, dstID := src.ClusterMyID(ctx).Val(), dst.ClusterMyID(ctx).Val()
	if err := dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err(); err != nil {
		t.Fatal(err)
	}
	read("a slot being imported", false)
	if err := src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err(); err != nil {
		t.Fatal(err)
	}
	read("a slot being moved", false)
	for _, m := range []*goredis.Client{src, dst} {
		if err := m.Do(ctx, "CLUSTER", "SETSLOT", slot, "STABLE").Err(); err != nil {
			t.Fatal(err)
		}
	}
	read("at rest again", true)

	defer SetScanKeysMax(0)()
	read("more keys than scanKeysMax", false)
}
