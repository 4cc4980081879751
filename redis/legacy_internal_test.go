package redis

import (
	"context"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
)

// Releases a Cluster store wrote before the registry was kept per slot
// registered their namespace in the one set <prefix>:namespaces only: a
// fresh store's all-namespaces List and Get still find them (the set is
// read beside the per-slot registries).
func TestClusterLegacyRegistry(t *testing.T) {
	c := redisenv.StartCluster(t, 3, 0)
	prefix := testenv.UniqueName("legacy-")
	conn := c.URL() + "?key_prefix=" + prefix
	ctx := context.Background()
	s, err := helm3.Open(ctx, Name, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ns := "old-team"
	rls := &release.Release{Name: "app", Namespace: ns, Version: 1, Manifest: "m",
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "1"}},
		Info:  &release.Info{Status: release.StatusDeployed}}
	if err := s.Namespace(ns).Create("sh.helm.release.v1.app.v1", rls); err != nil {
		t.Fatal(err)
	}
	// As an older version left it: the namespace in the one set, not in
	// its slot's registry.
	b := backendOf(t, s)
	admin := c.Client()
	defer admin.Close()
	if err := admin.SRem(ctx, b.registryKey(ns), ns).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.SAdd(ctx, b.k.namespaces(), ns).Err(); err != nil {
		t.Fatal(err)
	}
	fresh, err := helm3.Open(ctx, Name, conn)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	all := fresh.Namespace("")
	list, err := all.List(func(*release.Release) bool { return true })
	if err != nil || len(list) != 1 || list[0].Namespace != ns {
		t.Fatalf("all-namespaces List of a fresh store: %d releases, %v; want %s's one", len(list), err, ns)
	}
	if r, err := all.Get("sh.helm.release.v1.app.v1"); err != nil || r.Namespace != ns {
		t.Fatalf("all-namespaces Get: %v", err)
	}
}
