package redis_test

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/redis"
)

// overreacher is drivertest.Overreacher for a user of NamespaceACL
// (confineACL): its attempts are Redis commands sent as that user on the
// server, or on the Cluster primary that serves their key (every primary
// for a command that names none); those that would harm the shared server
// if a broken rule let them run are only checked, with ACL DRYRUN.
type overreacher struct {
	t        *testing.T
	s        helm3.Store
	prefix   string
	ns       string // the user's namespace
	user, pw string
	seeds    []string // the server, or the Cluster's seed addresses
	cluster  bool
	db       int
}

// newOverreacher makes a user of NamespaceACL for ns over the store s
// opened on conn.
func newOverreacher(t *testing.T, s helm3.Store, conn, ns string) *overreacher {
	u, err := url.Parse(confineACL(t, conn, ns))
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	db, _ := strconv.Atoi(strings.Trim(u.Path, "/"))
	seeds := strings.Split(u.Host, ",")
	return &overreacher{t: t, s: s, prefix: u.Query().Get("key_prefix"), ns: ns, user: u.User.Username(), pw: pw,
		seeds: seeds, cluster: len(seeds) > 1, db: db}
}

// client returns a go-redis client of the server or Cluster, as the
// confined user if confined, else as the default user (the store's).
func (o *overreacher) client(confined bool) goredis.UniversalClient {
	if confined {
		return serverClient(o.seeds, o.db, o.user, o.pw)
	}
	return serverClient(o.seeds, o.db, "", "")
}

// serverClient returns a go-redis client of the server at seeds[0], or of
// the Cluster seeds name if there are several, as user (the default user
// if "").
func serverClient(seeds []string, db int, user, password string) goredis.UniversalClient {
	return goredis.NewUniversalClient(&goredis.UniversalOptions{Addrs: seeds, DB: db, IsClusterMode: len(seeds) > 1,
		Username: user, Password: password})
}

// connClient returns a go-redis client, as the default user, of the server
// or Cluster the connection string conn names.
func connClient(t testing.TB, conn string) goredis.UniversalClient {
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	db, _ := strconv.Atoi(strings.Trim(u.Path, "/"))
	return serverClient(strings.Split(u.Host, ","), db, "", "")
}

// nodes returns the address of the server, or in Cluster of the primary
// that serves key (every primary for "").
func (o *overreacher) nodes(ctx context.Context, key string) []string {
	if !o.cluster {
		return o.seeds
	}
	cc := o.client(false).(*goredis.ClusterClient)
	defer cc.Close()
	if key != "" {
		m, err := cc.MasterForKey(ctx, key)
		if err != nil {
			o.t.Fatal(err)
		}
		return []string{m.Options().Addr}
	}
	var mu sync.Mutex
	var out []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, m.Options().Addr)
		return nil
	})
	if err != nil {
		o.t.Fatal(err)
	}
	return out
}

// refused reports whether err is Redis refusing a command to the user
// (an ACL rule, in a command or in a script), or not running it at all
// (CROSSSLOT); any other reply means the command ran.
func refused(err error) bool {
	var re replyError
	if !errors.As(err, &re) {
		return false
	}
	for _, s := range []string{"NOPERM", "no permissions", "can't access", "can't run", "CROSSSLOT"} {
		if strings.Contains(string(re), s) {
			return true
		}
	}
	return false
}

// run sends args as the confined user, each on a connection of its own,
// on the nodes serving key: nil if one of them ran it.
func (o *overreacher) run(ctx context.Context, key string, args ...any) error {
	var last error
	for _, addr := range o.nodes(ctx, key) {
		rc, err := dialRaw(ctx, addr, o.user, o.pw, o.db)
		if err != nil {
			o.t.Fatal(err)
		}
		_, err = rc.do(ctx, args...)
		rc.Close()
		if err == nil || !refused(err) {
			var re replyError
			if err != nil && !errors.As(err, &re) {
				o.t.Fatalf("%v as the confined user on %s: %v", args, addr, err)
			}
			return nil
		}
		last = err
	}
	return last
}

// dryRun asks every node, as the default user, whether it would run args
// for the confined user (ACL DRYRUN): nil if one would.
func (o *overreacher) dryRun(ctx context.Context, args ...any) error {
	for _, addr := range o.nodes(ctx, "") {
		rc, err := dialRaw(ctx, addr, "", "", o.db)
		if err != nil {
			o.t.Fatal(err)
		}
		reply, err := rc.do(ctx, append([]any{"ACL", "DRYRUN", o.user}, args...)...)
		rc.Close()
		if err != nil {
			o.t.Fatalf("ACL DRYRUN %s %v on %s: %v", o.user, args, addr, err)
		}
		if reply == "OK" {
			return nil
		}
	}
	return fmt.Errorf("%v: refused", args)
}

// others returns the namespaces other than the user's that hold releases.
func (o *overreacher) others() []string {
	rs, err := o.s.Namespace("").List(func(*release.Release) bool { return true })
	if err != nil {
		o.t.Fatal(err)
	}
	var out []string
	for _, r := range rs {
		if r.Namespace != o.ns && !slices.Contains(out, r.Namespace) {
			out = append(out, r.Namespace)
		}
	}
	return out
}

// Attempts are, for every key of the namespace registry (and the keys of
// another namespace a read trusts), each command that could remove a
// namespace from it, replace it or change its type (refused), and adding
// to it, which the rules allow: a name that is not a namespace, even with
// keys the user made under its own hash tag, must not show in any
// reader's view. Then what observes or changes the whole server: reading
// key names or counts, Pub/Sub and keyspace notifications, client-side
// caching, scripts' administration, and (checked with DRYRUN only) what
// would destroy data or stop the server.
func (o *overreacher) Attempts(ctx context.Context) ([]drivertest.Attempt, error) {
	p, a := o.prefix, o.ns
	others := o.others()
	if len(others) == 0 {
		return nil, errors.New("no other namespace holds releases")
	}
	b := others[0]
	tag := func(ns string) string { return p + ":{" + ns + "}:" }
	own := tag(a) + "overreach"
	var out []drivertest.Attempt
	cmd := func(refused bool, key string, args ...any) {
		out = append(out, drivertest.Attempt{What: strings.TrimSpace(fmt.Sprintln(args...)), Refused: refused,
			Try: func(ctx context.Context) error { return o.run(ctx, key, args...) }})
	}
	setup := func(args ...any) {
		c := o.client(true)
		defer c.Close()
		if err := c.Do(context.Background(), args...).Err(); err != nil && !errors.Is(err, goredis.Nil) {
			o.t.Fatalf("%v as the confined user: %v", args, err)
		}
	}
	for _, r := range redis.RegistryKeys(o.t, o.s, append([]string{a}, others...)...) {
		out = append(out, drivertest.Attempt{What: "SADD " + own + " " + a, Try: func(context.Context) error {
			setup("SADD", own, a)
			return nil
		}})
		for _, ns := range append([]string{a}, others...) {
			cmd(true, r, "SREM", r, ns)
		}
		cmd(true, r, "DEL", r)
		cmd(true, r, "UNLINK", r)
		cmd(true, r, "SPOP", r)
		cmd(true, r, "PEXPIRE", r, 1)
		cmd(true, r, "SET", r, "not a set")
		cmd(true, r, "RENAME", r, r+"-stolen") // its own slot in Cluster when r has a hash tag
		cmd(true, r, "RENAME", own, r)
		cmd(true, r, "COPY", own, r, "REPLACE")
		cmd(true, r, "SMOVE", r, own, b)
		cmd(true, r, "SINTERSTORE", r, own)
		cmd(true, r, "MOVE", r, 1)
		cmd(true, r, "EVAL", "return redis.call('DEL', KEYS[1])", 1, r)
		cmd(true, r, "EVAL", "return redis.call('DEL', ARGV[1])", 0, r)
		cmd(true, r, "EVAL", "return redis.call('SREM', ARGV[1], ARGV[2])", 0, r, b)
		cmd(false, r, "SADD", r, "no-such-namespace")
		// A copy of its own releases' heads under a name that is not a
		// namespace, whose keys fall under its own hash tag: registered,
		// it would show as another namespace's releases.
		forged := a + "}:forged"
		out = append(out, drivertest.Attempt{What: fmt.Sprintf("SADD %s %q with a copy of %s's heads under that name", r, forged, a), Try: func(ctx context.Context) error {
			o.forge(a, forged)
			return o.run(ctx, r, "SADD", r, forged)
		}})
	}
	// The keys of another namespace an all-namespaces read trusts.
	for _, k := range []string{tag(b) + "all", tag(b) + "h:" + driverKey("db", 1)} {
		cmd(true, k, "DEL", k)
		cmd(true, k, "RENAME", k, k+"-stolen")
		cmd(true, k, "OBJECT", "ENCODING", k)
	}
	cmd(true, tag(b)+"all", "SREM", tag(b)+"all", driverKey("db", 1))
	// Learning the keys of other namespaces, or watching them.
	for _, args := range [][]any{
		{"DBSIZE"}, {"SCAN", 0}, {"SCAN", 0, "MATCH", tag(b) + "*"}, {"KEYS", "*"}, {"RANDOMKEY"},
		{"INFO", "keyspace"}, {"INFO"}, {"CLIENT", "LIST"}, {"SLOWLOG", "GET"}, {"LATENCY", "LATEST"},
		{"MEMORY", "STATS"}, {"MEMORY", "DOCTOR"}, {"ACL", "LOG"}, {"ACL", "LIST"},
		{"CONFIG", "GET", "notify-keyspace-events"}, {"PUBSUB", "CHANNELS"}, {"PUBSUB", "NUMPAT"},
		{"MONITOR"}, {"SUBSCRIBE", "__redis__:invalidate"}, {"PSUBSCRIBE", "__keyspace@*__:*"},
		{"PSUBSCRIBE", "__keyevent@*__:*"}, {"PSUBSCRIBE", "*"}, {"SSUBSCRIBE", "x"}, {"PUBLISH", "x", "y"},
		{"CLIENT", "TRACKING", "ON", "BCAST"}, {"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", tag(b)},
		{"CLIENT", "TRACKING", "ON"}, {"SCRIPT", "DEBUG", "NO"}, {"SCRIPT", "KILL"}, {"FUNCTION", "LIST"},
		{"CLUSTER", "COUNTKEYSINSLOT", 0}, {"CLUSTER", "GETKEYSINSLOT", 0, 10},
		{"EVAL", "return redis.call('DBSIZE')", 0}, {"EVAL", "return redis.call('SCAN', '0')", 0},
		{"EVAL", "return redis.call('KEYS', '*')", 0}, {"EVAL", "return redis.call('SMEMBERS', ARGV[1])", 0, tag(b) + "all"},
	} {
		cmd(true, "", args...)
	}
	cmd(true, own, "SORT", own, "BY", "nosort", "GET", tag(b)+"h:*->index")
	cmd(true, own, "SORT_RO", own, "BY", "nosort", "GET", tag(b)+"h:*->index")
	// What would destroy every namespace's data or stop the server:
	// checked, never run.
	for _, args := range [][]any{
		{"FLUSHALL"}, {"FLUSHDB"}, {"SWAPDB", 0, 1}, {"SCRIPT", "FLUSH"}, {"CLIENT", "KILL", "TYPE", "normal"},
		{"CLIENT", "PAUSE", 10}, {"CONFIG", "SET", "notify-keyspace-events", "KEA"}, {"SHUTDOWN", "NOSAVE"},
		{"DEBUG", "SLEEP", 0}, {"REPLICAOF", "NO", "ONE"}, {"ACL", "SETUSER", o.user, "~*"},
		{"DEBUG", "OBJECT", tag(b) + "all"}, {"RESTORE", tag(a) + "x", 0, "x"}, {"MIGRATE", "127.0.0.1", 1, tag(b) + "all", 0, 1},
	} {
		out = append(out, drivertest.Attempt{What: strings.TrimSpace(fmt.Sprintln(args...)) + " (ACL DRYRUN)", Refused: true,
			Try: func(ctx context.Context) error { return o.dryRun(ctx, args...) }})
	}
	return out, nil
}

// forge copies, as the confined user, the heads of its namespace ns into
// keys for the name forged (under ns's hash tag), with the set of releases
// that lists them.
func (o *overreacher) forge(ns, forged string) {
	ctx := context.Background()
	c := o.client(true)
	defer c.Close()
	from, to := o.prefix+":{"+ns+"}:", o.prefix+":{"+forged+"}:"
	keys, err := c.SMembers(ctx, from+"all").Result()
	if err != nil {
		o.t.Fatal(err)
	}
	for _, k := range keys {
		h, err := c.HGetAll(ctx, from+"h:"+k).Result()
		if err != nil {
			o.t.Fatal(err)
		}
		if err := c.HSet(ctx, to+"h:"+k, h).Err(); err != nil {
			o.t.Fatal(err)
		}
		if err := c.SAdd(ctx, to+"all", k).Err(); err != nil {
			o.t.Fatal(err)
		}
	}
}

// Watch opens connections as the confined user to the server (every
// primary of a Cluster), and on them asks for every push Redis can send
// a client of another's writes: client-side caching invalidations,
// broadcast for every key and for the prefix of every other namespace,
// and Pub/Sub messages of every channel (keyspace notifications, the
// invalidation channel). What the server refuses is left refused; stop
// reads what each connection was pushed (drain).
func (o *overreacher) Watch(ctx context.Context) (func() (string, error), error) {
	var conns []*rawConn
	closeAll := func() {
		for _, rc := range conns {
			rc.Close()
		}
	}
	prefixes := []string{o.prefix + ":"}
	for _, ns := range o.others() {
		prefixes = append(prefixes, o.prefix+":{"+ns+"}:")
	}
	asks := [][][]any{{{"CLIENT", "TRACKING", "ON", "BCAST"}}, {{"CLIENT", "TRACKING", "ON"}},
		{{"SUBSCRIBE", "__redis__:invalidate"}, {"PSUBSCRIBE", "*"}}}
	for _, p := range prefixes {
		asks = append(asks, [][]any{{"CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", p}})
	}
	for _, addr := range o.nodes(ctx, "") {
		for _, ask := range asks {
			rc, err := dialRaw(ctx, addr, o.user, o.pw, o.db)
			if err != nil {
				closeAll()
				return nil, err
			}
			conns = append(conns, rc)
			for _, args := range ask {
				if _, err := rc.do(ctx, args...); err != nil && !refused(err) {
					closeAll()
					return nil, fmt.Errorf("%v: %w", args, err)
				}
			}
		}
	}
	return func() (string, error) {
		defer closeAll()
		var out strings.Builder
		for _, rc := range conns {
			got, err := rc.drain(context.Background())
			if err != nil {
				return out.String(), err
			}
			out.WriteString(got)
		}
		return out.String(), nil
	}, nil
}
