package redis_test

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
)

// prefixOf returns the key_prefix of a connection string withPrefix made.
func prefixOf(t testing.TB, conn string) string {
	t.Helper()
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query().Get("key_prefix")
}

// seenFromEverywhere checks that a store opened afresh on conn finds key in
// ns through the all-namespaces view: by List, and by Get.
func seenFromEverywhere(t *testing.T, conn, ns, key, what string) {
	t.Helper()
	fresh := openStore(t, conn)
	defer fresh.Close()
	all := fresh.Namespace("")
	list, err := all.List(func(*release.Release) bool { return true })
	if err != nil {
		t.Fatalf("%s: all-namespaces List: %v", what, err)
	}
	found := false
	for _, r := range list {
		found = found || (r.Namespace == ns && driver.MakeKey(r.Name, r.Version) == key)
	}
	if !found {
		t.Fatalf("%s: the all-namespaces List of a fresh store misses %s/%s (it has %d releases)", what, ns, key, len(list))
	}
	if r, err := all.Get(key); err != nil || r.Namespace != ns {
		t.Fatalf("%s: all-namespaces Get of %s: %v", what, key, err)
	}
	if n, err := fresh.Namespace(ns).Query(map[string]string{"owner": "helm"}); err != nil || len(n) == 0 {
		t.Fatalf("%s: namespace Query: %d, %v", what, len(n), err)
	}
}

// A store that outlives its server's data (FLUSHALL, then a restart without
// persistence): every release it writes afterwards is reachable from the
// all-namespaces view of a fresh store, as from its namespace.
func TestRegistryAfterDataLoss(t *testing.T) {
	n := redisenv.StartNode(t)
	conn := withPrefix(t, "redis://"+n.Addr+"/0")
	s := openStore(t, conn)
	defer s.Close()
	ns := "team-a"
	v := s.Namespace(ns)
	if err := upgrade(v, ns, "app", 1); err != nil {
		t.Fatal(err)
	}
	seenFromEverywhere(t, conn, ns, driver.MakeKey("app", 1), "before any loss")

	admin := n.Client()
	defer admin.Close()
	if err := admin.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := upgrade(v, ns, "app", 1); err != nil {
		t.Fatal(err)
	}
	seenFromEverywhere(t, conn, ns, driver.MakeKey("app", 1), "after FLUSHALL")

	n.Kill()
	if err := n.Restart(); err != nil {
		t.Fatal(err)
	}
	// The same store writes on: its first attempts may meet the restart.
	var err error
	for i := 0; i < 50; i++ {
		if err = upgrade(v, ns, "app", 1); err == nil || !errors.Is(err, helm3.ErrUnavailable) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := upgrade(v, ns, "app", 2); err != nil {
		t.Fatal(err)
	}
	seenFromEverywhere(t, conn, ns, driver.MakeKey("app", 2), "after a restart without persistence")
}
