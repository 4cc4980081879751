package redis_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
)

// A user made with NamespaceACL (confineACL) reads and writes releases of its own
// namespace, and is refused (ErrAccessDenied, never "not found") in
// another namespace and across namespaces, on one server and on a
// Cluster; what it writes, the store's owner reads.
func TestNamespaceACL(t *testing.T) {
	for name, base := range map[string]func(testing.TB) string{
		"Standalone": func(t testing.TB) string { return "redis://" + redisenv.StartNode(t).Addr + "/0" },
		"Cluster":    redisenv.SharedCluster,
	} {
		t.Run(name, func(t *testing.T) {
			conn := withPrefix(t, base(t))
			owner := openStore(t, conn)
			defer owner.Close()
			if err := owner.Namespace("team-b").Create("sh.helm.release.v1.db.v1", smallRelease("db", "team-b", 1, release.StatusDeployed)); err != nil {
				t.Fatal(err)
			}
			s := openStore(t, confineACL(t, conn, "team-a"))
			defer s.Close()
			a := s.Namespace("team-a")
			for v := 1; v <= 2; v++ {
				if err := a.Create(driverKey("app", v), smallRelease("app", "team-a", v, release.StatusDeployed)); err != nil {
					t.Fatalf("create in its own namespace: %v", err)
				}
			}
			if r, err := a.Get(driverKey("app", 2)); err != nil || r.Version != 2 {
				t.Fatalf("get in its own namespace: %v", err)
			}
			if rs, err := a.List(func(*release.Release) bool { return true }); err != nil || len(rs) != 2 {
				t.Fatalf("list of its own namespace: %d, %v", len(rs), err)
			}
			if _, err := a.Delete(driverKey("app", 1)); err != nil {
				t.Fatalf("delete in its own namespace: %v", err)
			}
			if r, err := owner.Namespace("team-a").Get(driverKey("app", 2)); err != nil || r.Name != "app" {
				t.Fatalf("the owner reads what the user wrote: %v", err)
			}
			b := s.Namespace("team-b")
			for what, op := range map[string]func() error{
				"get": func() error { _, err := b.Get("sh.helm.release.v1.db.v1"); return err },
				"create": func() error {
					return b.Create("sh.helm.release.v1.x.v1", smallRelease("x", "team-b", 1, release.StatusDeployed))
				},
				"update": func() error {
					return b.Update("sh.helm.release.v1.db.v1", smallRelease("db", "team-b", 1, release.StatusFailed))
				},
				"delete": func() error { _, err := b.Delete("sh.helm.release.v1.db.v1"); return err },
				"list": func() error {
					_, err := b.List(func(*release.Release) bool { return true })
					return err
				},
				"query": func() error { _, err := b.Query(map[string]string{"name": "db", "owner": "helm"}); return err },
				"list across namespaces": func() error {
					_, err := s.Namespace("").List(func(*release.Release) bool { return true })
					return err
				},
			} {
				if err := op(); !errors.Is(err, helm3.ErrAccessDenied) || errors.Is(err, helm3.ErrReleaseNotFound) {
					t.Errorf("%s in another namespace: %v; want ErrAccessDenied", what, err)
				}
			}
			if r, err := owner.Namespace("team-b").Get("sh.helm.release.v1.db.v1"); err != nil || r.Info.Status != release.StatusDeployed {
				t.Errorf("team-b's release after the refusals: %v, %v", r, err)
			}
		})
	}
}

func driverKey(name string, v int) string { return fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, v) }

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// setUser runs args (ACL SETUSER) on the server of conn, or on every
// primary of the Cluster.
func setUser(t *testing.T, conn string, cluster bool, args []any) {
	t.Helper()
	ctx := context.Background()
	if cluster {
		u, err := url.Parse(conn) // redis://host:port,host:port
		if err != nil {
			t.Fatal(err)
		}
		c := goredis.NewClusterClient(&goredis.ClusterOptions{Addrs: strings.Split(u.Host, ",")})
		defer c.Close()
		err = c.ForEachShard(ctx, func(ctx context.Context, n *goredis.Client) error { return n.Do(ctx, args...).Err() })
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	o, err := goredis.ParseURL(conn)
	if err != nil {
		t.Fatal(err)
	}
	c := goredis.NewClient(o)
	defer c.Close()
	if err := c.Do(ctx, args...).Err(); err != nil {
		t.Fatal(err)
	}
}

// keylessAllowed are the commands naming no key that a user of
// NamespaceACL may run, each reviewed: none tells anything of other keys
// or other clients, or changes anything but the user's own connection.
// Those from versions after 7.0 are listed too.
var keylessAllowed = map[string]string{
	"asking": "follows a Cluster redirection", "readonly": "reads from replicas", "readwrite": "reads from primaries",
	"auth": "its own credentials", "hello": "its own connection's protocol", "reset": "its own connection",
	"ping": "", "echo": "", "quit": "", "select": "another database, under the same key patterns",
	"client|getname": "its own connection", "client|setname": "", "client|id": "", "client|info": "", "client|reply": "",
	"client|help": "", "client|caching": "client-side caching, which it cannot turn on", "client|trackinginfo": "its own connection's",
	"client|getredir": "its own connection's", "client|setinfo": "its own connection (7.2)", "client|no-touch": "its own reads (7.2)",
	"cluster|nodes": "the topology, no key", "cluster|shards": "", "cluster|slots": "",
	"command": "the server's commands, no key", "command|count": "", "command|docs": "", "command|getkeys": "",
	"command|getkeysandflags": "", "command|help": "", "command|info": "", "command|list": "",
	"multi": "its own transaction", "exec": "", "discard": "", "unwatch": "",
	"script|load": "adds a script", "script|exists": "which scripts are loaded", "script|help": "",
	"lolwut": "", "wait": "how many replicas acknowledged its writes", "waitaof": "(7.2)",
}

// Every command that names no key and that a user of NamespaceACL may run,
// as the server the standalone suite runs on says (COMMAND, then ACL
// DRYRUN of each command and subcommand), is one of keylessAllowed: its
// key patterns confine every other command, and a new command of a later
// Redis is reviewed before it is allowed.
func TestNamespaceACLKeylessCommands(t *testing.T) {
	ctx := context.Background()
	conn := withPrefix(t, redisenv.URL(t))
	u, err := url.Parse(confineACL(t, conn, "team-a"))
	if err != nil {
		t.Fatal(err)
	}
	admin := connClient(t, conn)
	defer admin.Close()
	all, err := admin.Do(ctx, "COMMAND").Slice()
	if err != nil {
		t.Fatal(err)
	}
	var check func(info []any)
	checked := 0
	check = func(info []any) {
		// name, arity, flags, first key, last key, step, ACL categories,
		// tips, key specs, subcommands.
		name, _ := info[0].(string)
		arity, _ := info[1].(int64)
		first, _ := info[3].(int64)
		specs, _ := info[8].([]any)
		if subs, _ := info[9].([]any); len(subs) > 0 {
			for _, s := range subs {
				check(s.([]any))
			}
			return
		}
		if first != 0 || len(specs) > 0 {
			return
		}
		args := []any{"ACL", "DRYRUN", u.User.Username()}
		for _, w := range strings.Split(name, "|") {
			args = append(args, w)
		}
		for len(args)-3 < int(max(arity, -arity)) {
			args = append(args, "0")
		}
		reply, err := admin.Do(ctx, args...).Text()
		if err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		checked++
		if _, ok := keylessAllowed[name]; reply == "OK" && !ok {
			t.Errorf("a user of NamespaceACL may run %s, which names no key and is not reviewed (keylessAllowed)", name)
		}
	}
	for _, c := range all {
		check(c.([]any))
	}
	if checked < 100 {
		t.Fatalf("only %d commands naming no key checked", checked)
	}
}
