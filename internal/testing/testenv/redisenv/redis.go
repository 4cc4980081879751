// Package redisenv finds or starts the Redis servers the redis backend's
// tests run against: a shared standalone server (URL), private servers
// that tests kill and restart (StartNode, StartTLS), a Cluster (StartCluster,
// SharedCluster) and a Sentinel group (StartSentinel), all from a local
// redis-server binary.
package redisenv

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// Env names a Redis server for tests (a redis:// or rediss:// URL).
const Env = "HELMSTORE_TEST_REDIS"

// ServerEnv is the path of the redis-server binary tests start
// (default: redis-server on PATH, else /usr/bin/redis-server).
const ServerEnv = "HELMSTORE_REDIS_SERVER"

const defaultRedis = "redis://127.0.0.1:6379/0"

var redisServer testenv.Shared[string]

// URL returns the URL of a reachable standalone Redis server: the one in
// HELMSTORE_TEST_REDIS, else the machine's own on 127.0.0.1:6379, else a
// private redis-server started on a free loopback port (stopped when the
// test binary exits). Tests share it; each keeps to its own key prefix.
func URL(t testing.TB) string {
	t.Helper()
	return redisServer.Get(t, "Redis", findRedis)
}

func findRedis() (string, error) {
	if u := os.Getenv(Env); u != "" {
		return u, pingRedis(u)
	}
	if testenv.Reachable("127.0.0.1:6379") && pingRedis(defaultRedis) == nil {
		return defaultRedis, nil
	}
	n, err := startRedisNode(nil)
	if err != nil {
		return "", fmt.Errorf("nothing answers on 127.0.0.1:6379 and %v", err)
	}
	return "redis://" + n.Addr + "/0", nil
}

func pingRedis(u string) error {
	o, err := goredis.ParseURL(u)
	if err != nil {
		return err
	}
	c := goredis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return c.Ping(ctx).Err()
}

// ServerBinary returns the redis-server to start, or why there is none.
func ServerBinary() (string, error) {
	if p := os.Getenv(ServerEnv); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/redis-server"); err == nil {
		return "/usr/bin/redis-server", nil
	}
	return "", errors.New("redis-server is not installed (not on PATH, no /usr/bin/redis-server, " + ServerEnv + " not set): `make test` installs Debian's redis-server (tools/ensure-redis.sh)")
}

// Node is a redis-server process a test started, on 127.0.0.1.
type Node struct {
	Addr string
	Port int
	Dir  string
	args []string
	// password is the server's requirepass, for Client.
	password string

	mu sync.Mutex
	p  *testenv.Proc
}

var (
	nodesMu sync.Mutex
	nodes   []*Node
)

// StopServers stops every redis-server the tests of this process
// started (call it from TestMain after m.Run; the kernel kills them anyway
// when the test process dies).
func StopServers() {
	nodesMu.Lock()
	ns := nodes
	nodes = nil
	nodesMu.Unlock()
	for _, n := range ns {
		n.Kill()
	}
}

// StartNode starts a private redis-server on a free loopback port with
// extra arguments, stopped when t ends.
func StartNode(t testing.TB, extra ...string) *Node {
	t.Helper()
	n, err := startRedisNode(extra)
	if err != nil {
		testenv.Unavailable(t, "redis-server", err)
	}
	t.Cleanup(n.Kill)
	return n
}

// startRedisNode starts redis-server with extra arguments in a new temporary
// directory (no persistence unless extra asks for it). A "{port}" in extra
// is replaced by the port chosen; with --tls-port, the plain port is off.
func startRedisNode(extra []string) (*Node, error) {
	return startRedisProcess("", extra)
}

// startRedisProcess starts redis-server as startRedisNode does; with a
// config, that text (after "{port}" is replaced) is written to redis.conf in
// the node's directory and the server loads it (a Sentinel needs a config
// file it can rewrite).
func startRedisProcess(config string, extra []string) (*Node, error) {
	bin, err := ServerBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "helmstore-redis-")
	if err != nil {
		return nil, err
	}
	n := &Node{Dir: dir}
	p, addr, err := testenv.StartOnFreePort(dir, "redis", bin, func(port int) []string {
		n.args = redisArgs(dir, port, config, extra)
		return n.args
	}, 30*time.Second)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	n.p, n.Addr = p, addr
	n.Port, _ = strconv.Atoi(addr[strings.LastIndex(addr, ":")+1:])
	nodesMu.Lock()
	nodes = append(nodes, n)
	nodesMu.Unlock()
	return n, nil
}

// redisArgs returns redis-server's arguments for a node on port in dir,
// writing config to dir/redis.conf first when there is one (a write error
// shows as the server failing to start).
func redisArgs(dir string, port int, config string, extra []string) []string {
	ps := strconv.Itoa(port)
	var args []string
	if config != "" {
		conf := filepath.Join(dir, "redis.conf")
		os.WriteFile(conf, []byte(strings.ReplaceAll(config, "{port}", ps)), 0o600)
		args = append(args, conf)
	}
	listen := []string{"--port", ps}
	var rest []string
	for _, a := range extra {
		a = strings.ReplaceAll(a, "{port}", ps)
		if a == "--tls-port" {
			listen = []string{"--port", "0"}
		}
		rest = append(rest, a)
	}
	args = append(args, "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no")
	args = append(args, listen...)
	return append(args, rest...)
}

// Kill kills the server (SIGKILL: nothing is saved on the way out).
func (n *Node) Kill() {
	n.mu.Lock()
	p := n.p
	n.p = nil
	n.mu.Unlock()
	p.Kill()
}

// Running reports whether n is running (not killed, not exited).
func (n *Node) Running() bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.p != nil && !n.p.Exited()
}

// Restart starts the server again after Kill, with the same port,
// arguments and directory (what it persisted there, if anything, is
// loaded).
func (n *Node) Restart() error {
	bin, err := ServerBinary()
	if err != nil {
		return err
	}
	p, err := testenv.StartServer(n.Dir, "redis", bin, n.args, n.Addr, 30*time.Second, nil)
	if err != nil {
		return err
	}
	n.mu.Lock()
	n.p = p
	n.mu.Unlock()
	return nil
}

// Client returns a go-redis client connected to the node alone (with the
// node's password, if it has one).
func (n *Node) Client() *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: n.Addr, Password: n.password})
}

// StartTLS starts a private redis-server that accepts only TLS, with a
// certificate for 127.0.0.1 signed by a CA made for it, stopped when t ends.
// It returns the node and the CA's PEM file. Clients need no certificate.
func StartTLS(t testing.TB) (*Node, string) {
	t.Helper()
	dir := t.TempDir()
	ca, err := testenv.WriteCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := StartNode(t, "--tls-port", "{port}", "--tls-cert-file", filepath.Join(dir, "server.pem"),
		"--tls-key-file", filepath.Join(dir, "server-key.pem"), "--tls-ca-cert-file", ca, "--tls-auth-clients", "no")
	return n, ca
}
