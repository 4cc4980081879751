package redis_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/redis"
)

// rawStore is a store on the shared server under a prefix of its own, with
// a plain client to edit its keys behind its back.
type rawStore struct {
	s      helm3.Store
	conn   string
	prefix string
	c      *goredis.Client
}

func newRawStore(t *testing.T) *rawStore {
	t.Helper()
	conn := withPrefix(t, redisenv.URL(t))
	o, err := goredis.ParseURL(strings.SplitN(conn, "?", 2)[0])
	if err != nil {
		t.Fatal(err)
	}
	r := &rawStore{s: openStore(t, conn, helm3.WithTimeout(30*time.Second)), conn: conn, prefix: prefixOf(t, conn), c: goredis.NewClient(o)}
	t.Cleanup(func() { r.s.Close(); r.c.Close() })
	return r
}

func (r *rawStore) head(ns, key string) string { return r.prefix + ":{" + ns + "}:h:" + key }
func (r *rawStore) set(ns, what string) string { return r.prefix + ":{" + ns + "}:" + what }
func (r *rawStore) part(ns, d string) string   { return r.prefix + ":{" + ns + "}:p:" + d }

// values returns the digest of the values part of key in ns.
func (r *rawStore) values(t *testing.T, ns, key string) string {
	t.Helper()
	d, err := r.c.HGet(context.Background(), r.head(ns, key), "values").Result()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func (r *rawStore) must(t *testing.T, cmds ...[]interface{}) {
	t.Helper()
	for _, c := range cmds {
		if err := r.c.Do(context.Background(), c...).Err(); err != nil {
			t.Fatalf("%v: %v", c, err)
		}
	}
}

func (r *rawStore) create(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := r.s.Create(driver.MakeKey(n, 1), smallRelease(n, "default", 1, release.StatusDeployed)); err != nil {
			t.Fatal(err)
		}
	}
}

func cmd(args ...interface{}) []interface{} { return args }

// A Create whose script meets a part whose refs is not an integer, or
// whose key is not a hash, heals it: the Create succeeds (sending the
// frame it had not sent, the store having seen the part stored), and the
// part's references are counted again from the namespace's heads (alpha's
// and the new one's), so deleting one of the two releases leaves the part
// to the other, and deleting both removes it.
func TestCreateOverDamagedPartHeals(t *testing.T) {
	for name, damage := range map[string]func(part string) [][]interface{}{
		"refs-not-a-count": func(part string) [][]interface{} { return [][]interface{}{cmd("HSET", part, "refs", "x")} },
		"not-a-hash": func(part string) [][]interface{} {
			return [][]interface{}{cmd("DEL", part), cmd("SET", part, "not a part")}
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			r := newRawStore(t)
			r.create(t, "alpha")
			chart, err := r.c.HGet(ctx, r.head("default", driver.MakeKey("alpha", 1)), "chart").Result()
			if err != nil {
				t.Fatal(err)
			}
			part := r.part("default", chart)
			r.must(t, damage(part)...)
			key := driver.MakeKey("beta", 1)
			if err := r.s.Create(key, smallRelease("beta", "default", 1, release.StatusDeployed)); err != nil {
				t.Fatalf("Create over the damaged part: %v; want it stored", err)
			}
			if refs, err := r.c.HGet(ctx, part, "refs").Result(); err != nil || refs != "2" {
				t.Fatalf("the part's refs after the Create = %q, %v; want 2 (alpha and beta)", refs, err)
			}
			if _, err := r.s.Delete(key); err != nil {
				t.Fatal(err)
			}
			if got, err := r.s.Get(driver.MakeKey("alpha", 1)); err != nil || got.Chart == nil {
				t.Fatalf("Get of alpha after beta's Delete: %v", err)
			}
			if _, err := r.s.Delete(driver.MakeKey("alpha", 1)); err != nil {
				t.Fatal(err)
			}
			if n, err := r.c.Exists(ctx, part).Result(); err != nil || n != 0 {
				t.Fatalf("the part is left after every release using it was deleted (%d, %v)", n, err)
			}
		})
	}
}

// wrongTypes are keys replaced by a string; each names the releases whose
// reads it may make corrupt ("" when it may make none so).
var wrongTypes = []struct {
	name    string
	key     func(r *rawStore, t *testing.T) string
	corrupt string
}{
	{"head", func(r *rawStore, t *testing.T) string { return r.head("default", driver.MakeKey("alpha", 1)) }, "alpha"},
	{"values part", func(r *rawStore, t *testing.T) string {
		return r.part("default", r.values(t, "default", driver.MakeKey("alpha", 1)))
	}, "alpha"},
	{"name index", func(r *rawStore, t *testing.T) string { return r.set("default", "n:alpha") }, ""},
	{"all index", func(r *rawStore, t *testing.T) string { return r.set("default", "all") }, ""},
	{"status index", func(r *rawStore, t *testing.T) string { return r.set("default", "s:deployed") }, ""},
	{"parts set", func(r *rawStore, t *testing.T) string { return r.set("default", "parts") }, ""},
	{"registry", func(r *rawStore, t *testing.T) string { return r.prefix + ":namespaces" }, ""},
}

// A key of the wrong type is corruption of the releases it touches only:
// the others read as before through Get, List, Query and the
// all-namespaces view, Stats answers, no raw WRONGTYPE reaches the caller,
// and the damaged release can be deleted.
func TestWrongTypeKeys(t *testing.T) {
	for _, wt := range wrongTypes {
		t.Run(strings.ReplaceAll(wt.name, " ", "-"), func(t *testing.T) {
			r := newRawStore(t)
			r.create(t, "alpha", "beta", "gamma")
			k := wt.key(r, t)
			r.must(t, cmd("DEL", k), cmd("SET", k, "not what you think"))
			ak := driver.MakeKey("alpha", 1)
			for _, v := range []helm3.Store{r.s, r.s.Namespace("")} {
				got, err := v.Get(ak)
				if wt.corrupt == "alpha" {
					if !errors.Is(err, helm3.ErrCorrupt) || !strings.Contains(err.Error(), ak) || strings.Contains(err.Error(), "WRONGTYPE") {
						t.Fatalf("Get of alpha: %v; want ErrCorrupt naming it", err)
					}
				} else if err != nil || got.Name != "alpha" {
					t.Fatalf("Get of alpha: %v", err)
				}
			}
			want := "beta gamma"
			if wt.corrupt == "" {
				want = "alpha beta gamma"
			}
			for _, v := range []helm3.Store{r.s, r.s.Namespace("")} {
				list, err := v.List(func(*release.Release) bool { return true })
				if err != nil || names(list) != want {
					t.Fatalf("List: %s, %v; want %s", names(list), err, want)
				}
				list, err = v.Query(map[string]string{"owner": "helm", "status": "deployed"})
				if err != nil || names(list) != want {
					t.Fatalf("Query: %s, %v; want %s", names(list), err, want)
				}
				list, err = v.Query(map[string]string{"name": "beta", "owner": "helm"})
				if err != nil || names(list) != "beta" {
					t.Fatalf("Query name=beta: %s, %v", names(list), err)
				}
			}
			for _, ns := range []string{"default", ""} {
				if _, err := r.s.Namespace(ns).Stats(context.Background()); err != nil {
					t.Fatalf("Stats(%q): %v", ns, err)
				}
			}
			if _, err := r.s.Delete(ak); err != nil && !errors.Is(err, helm3.ErrCorrupt) {
				t.Fatalf("Delete of alpha: %v", err)
			}
			if _, err := r.s.Get(ak); !errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Fatalf("Get of alpha after Delete: %v", err)
			}
			// The namespace stays writable, and what is written is seen.
			r.create(t, "delta")
			for _, v := range []helm3.Store{r.s, r.s.Namespace("")} {
				list, err := v.List(func(*release.Release) bool { return true })
				if err != nil || names(list) != "beta delta gamma" {
					t.Fatalf("List after Delete and Create: %s, %v", names(list), err)
				}
			}
			for _, n := range []string{"beta", "gamma", "delta"} {
				if _, err := r.s.Delete(driver.MakeKey(n, 1)); err != nil {
					t.Fatalf("Delete of %s: %v", n, err)
				}
			}
		})
	}
}

// A head missing a field the backend writes (rev above all) can be updated
// and deleted, or is corrupt at once; never minutes of conflicts.
func TestHeadMissingField(t *testing.T) {
	for _, f := range []string{"rev", "index", "chart", "values", "manifest", "body"} {
		t.Run(f, func(t *testing.T) {
			r := newRawStore(t)
			r.create(t, "alpha", "beta")
			ak := driver.MakeKey("alpha", 1)
			r.must(t, cmd("HDEL", r.head("default", ak), f))
			start := time.Now()
			err := r.s.Update(ak, smallRelease("alpha", "default", 1, release.StatusSuperseded))
			if err != nil && !errors.Is(err, helm3.ErrCorrupt) {
				t.Fatalf("Update of a head without %s: %v (after %v)", f, err, time.Since(start))
			}
			if err == nil {
				got, err := r.s.Get(ak)
				if err != nil || got.Info.Status != release.StatusSuperseded {
					t.Fatalf("Get after the Update: %v", err)
				}
				r.must(t, cmd("HDEL", r.head("default", ak), f))
			}
			if _, err := r.s.Delete(ak); err != nil && !errors.Is(err, helm3.ErrCorrupt) {
				t.Fatalf("Delete of a head without %s: %v", f, err)
			}
			if _, err := r.s.Get(ak); !errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Fatalf("Get after Delete: %v", err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("Update and Delete took %v", d)
			}
			if got, err := r.s.Get(driver.MakeKey("beta", 1)); err != nil || got.Name != "beta" {
				t.Fatalf("Get of beta: %v", err)
			}
		})
	}
}

// names returns the sorted names of rs, space-separated.
func names(rs []*release.Release) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Name)
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

// Every variant of redis.Tamper's Reshape, on a head and on a part of one
// release: that release reads whole or corrupt, the others whole; List,
// Query and Stats answer; the release can be deleted.
func TestReshapeVariants(t *testing.T) {
	ctx := context.Background()
	for _, shape := range drivertest.Shapes {
		for _, target := range []string{"head", "part"} {
			for i := 0; ; i++ {
				r := newRawStore(t)
				r.create(t, "alpha", "beta", "gamma")
				ak := driver.MakeKey("alpha", 1)
				tg := drivertest.Target{Namespace: "default", Key: ak}
				if target == "part" {
					tg = drivertest.Target{Namespace: "default", Part: r.values(t, "default", ak)}
				}
				what, err := redis.Tamper(t, r.s).(drivertest.Reshaper).Reshape(ctx, tg, shape, i)
				if errors.Is(err, drivertest.ErrNoVariant) {
					break
				}
				if err != nil {
					t.Fatalf("%s %s %d: %v", shape, target, i, err)
				}
				if _, err := r.s.Get(ak); err != nil && !errors.Is(err, helm3.ErrCorrupt) {
					t.Errorf("%s: Get of alpha: %v", what, err)
				}
				for _, v := range []helm3.Store{r.s, r.s.Namespace("")} {
					if got, err := v.Get(driver.MakeKey("beta", 1)); err != nil || got.Name != "beta" {
						t.Errorf("%s: Get of beta: %v", what, err)
					}
					list, err := v.List(func(*release.Release) bool { return true })
					if got := names(list); err != nil || !strings.HasSuffix(got, "beta gamma") {
						t.Errorf("%s: List: %s, %v", what, got, err)
					}
					if _, err := v.Stats(ctx); err != nil {
						t.Errorf("%s: Stats: %v", what, err)
					}
				}
				if _, err := r.s.Delete(ak); err != nil && !errors.Is(err, helm3.ErrCorrupt) {
					t.Errorf("%s: Delete of alpha: %v", what, err)
				}
				if _, err := r.s.Get(ak); !errors.Is(err, helm3.ErrReleaseNotFound) {
					t.Errorf("%s: Get of alpha after Delete: %v", what, err)
				}
				t.Logf("%s: ok", what)
			}
		}
	}
}
