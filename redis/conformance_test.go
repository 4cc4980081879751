package redis_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/redis"
)

func openStore(t testing.TB, conn string, opts ...helm3.Option) helm3.Store {
	t.Helper()
	s, err := helm3.Open(context.Background(), redis.Name, conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withPrefix returns conn with a fresh key prefix: stores opened on it see
// only each other.
func withPrefix(t testing.TB, conn string) string {
	t.Helper()
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("key_prefix", testenv.UniqueName("helmstore-test-"))
	u.RawQuery = q.Encode()
	return u.String()
}

// harness returns the conformance harness over the server at base: a new
// key prefix for each Open, another client over it for Reopen and
// Proxied (whose every connection, to a server, a Sentinel or a Cluster
// node, is dialled through the proxy); Wipe deletes the prefix's keys;
// Confined is a user of NamespaceACL (confineACL), and Overreach what such
// a user sends Redis itself (overreacher).
func harness(base func(t testing.TB) string, opts ...helm3.Option) drivertest.Harness {
	var mu sync.Mutex
	conns := map[helm3.Store]string{}
	made := map[testing.TB]string{} // the connection string being opened, by test
	h := drivertest.ConnectionStrings{Name: redis.Name, New: func(t testing.TB) string {
		c := withPrefix(t, base(t))
		mu.Lock()
		made[t] = c
		mu.Unlock()
		return c
	}, Confine: confineACL, Options: opts}.Harness()
	open := h.Open
	h.Open = func(t *testing.T) helm3.Store {
		s := open(t)
		mu.Lock()
		conns[s] = made[t]
		delete(made, t)
		mu.Unlock()
		return s
	}
	h.Proxied = func(t *testing.T, s helm3.Store, proxy drivertest.ProxyFunc, more ...helm3.Option) (helm3.Store, error) {
		mu.Lock()
		c, ok := conns[s]
		mu.Unlock()
		if !ok {
			t.Fatal("Proxied: a store Open did not return")
		}
		return redis.OpenProxied(c, proxy, append(slices.Clone(opts), more...)...)
	}
	h.Overreach = func(t *testing.T, s helm3.Store, ns string) drivertest.Overreacher {
		mu.Lock()
		c, ok := conns[s]
		mu.Unlock()
		if !ok {
			t.Fatal("Overreach: a store Open did not return")
		}
		return newOverreacher(t, s, c, ns)
	}
	h.Tamper = redis.Tamper
	h.Wipe = redis.Wipe
	return h
}

func TestConformanceStandalone(t *testing.T) {
	h := harness(redisenv.URL)
	h.Denied = deniedStandalone
	drivertest.Run(t, h)
}

// deniedStandalone opens a store on the standalone server, on a key prefix
// of its own, as an ACL user that may run every command but the dangerous
// and administrative ones on no key at all (made on the server if
// missing): whatever prefix it had, it is refused.
func deniedStandalone(t *testing.T, _ helm3.Store, opts ...helm3.Option) (helm3.Store, error) {
	const user, pw = "helmstore-denied", "helmstore-denied-pw"
	base := redisenv.URL(t)
	o, err := goredis.ParseURL(base)
	if err != nil {
		t.Fatal(err)
	}
	admin := goredis.NewClient(o)
	defer admin.Close()
	if err := admin.Do(context.Background(), "ACL", "SETUSER", user, "on", ">"+pw, "resetkeys", "+@all", "-@dangerous", "-@admin").Err(); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(withPrefix(t, base))
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, pw)
	return helm3.Open(context.Background(), redis.Name, u.String(), opts...)
}

// confineACL returns conn as a new user of NamespaceACL for its key prefix
// and the one namespace given, made on the server (on every primary of a
// Cluster) and deleted when t ends. Behind Sentinel it skips: the user
// would have to be made on every server the Sentinels may promote.
func confineACL(t *testing.T, conn string, namespaces ...string) string {
	t.Helper()
	if len(namespaces) != 1 {
		t.Fatalf("NamespaceACL confines a user to one namespace, not %d", len(namespaces))
	}
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	if u.Query().Has("master_name") {
		t.Skip("confinement is tested on a server and on a Cluster, not behind Sentinel")
	}
	server := *u
	server.RawQuery = ""
	cluster := strings.Contains(u.Host, ",")
	user, pw := testenv.UniqueName("confined-"), "confined-secret"
	rules := redis.NamespaceACL(u.Query().Get("key_prefix"), namespaces[0])
	setUser(t, server.String(), cluster, append([]any{"ACL", "SETUSER", user, "on", ">" + pw}, toAny(rules)...))
	t.Cleanup(func() { setUser(t, server.String(), cluster, []any{"ACL", "DELUSER", user}) })
	u.User = url.UserPassword(user, pw)
	return u.String()
}
