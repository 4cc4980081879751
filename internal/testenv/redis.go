package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// RedisEnv names a Redis server for tests (a redis:// or rediss:// URL).
const RedisEnv = "HELMSTORE_TEST_REDIS"

// RedisServerEnv is the path of the redis-server binary tests start
// (default: redis-server on PATH, else /usr/bin/redis-server).
const RedisServerEnv = "HELMSTORE_REDIS_SERVER"

const defaultRedis = "redis://127.0.0.1:6379/0"

var (
	redisOnce sync.Once
	redisURL  string
	redisErr  error
)

// Redis returns the URL of a reachable standalone Redis server: the one in
// HELMSTORE_TEST_REDIS, else the machine's own on 127.0.0.1:6379, else a
// private redis-server started on a free loopback port (stopped when the
// test binary exits). Tests share it; each keeps to its own key prefix.
func Redis(t testing.TB) string {
	t.Helper()
	redisOnce.Do(func() { redisURL, redisErr = findRedis() })
	if redisErr != nil {
		Unavailable(t, "Redis", redisErr)
	}
	return redisURL
}

func findRedis() (string, error) {
	if u := os.Getenv(RedisEnv); u != "" {
		return u, pingRedis(u)
	}
	if reachable("127.0.0.1:6379") && pingRedis(defaultRedis) == nil {
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

// RedisServerBinary returns the redis-server to start, or why there is none.
func RedisServerBinary() (string, error) {
	if p := os.Getenv(RedisServerEnv); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p, nil
	}
	if _, err := os.Stat("/usr/bin/redis-server"); err == nil {
		return "/usr/bin/redis-server", nil
	}
	return "", errors.New("redis-server is not installed (not on PATH, no /usr/bin/redis-server, " + RedisServerEnv + " not set): `make test` installs Debian's redis-server (tools/ensure-redis.sh)")
}

// RedisNode is a redis-server process a test started, on 127.0.0.1.
type RedisNode struct {
	Addr string
	Port int
	Dir  string
	args []string

	mu  sync.Mutex
	cmd *exec.Cmd
}

var (
	nodesMu sync.Mutex
	nodes   []*RedisNode
)

// StopRedisServers stops every redis-server the tests of this process
// started (call it from TestMain after m.Run; the kernel kills them anyway
// when the test process dies).
func StopRedisServers() {
	nodesMu.Lock()
	ns := nodes
	nodes = nil
	nodesMu.Unlock()
	for _, n := range ns {
		n.Kill()
	}
}

// StartRedisNode starts a private redis-server on a free loopback port with
// extra arguments, stopped when t ends.
func StartRedisNode(t testing.TB, extra ...string) *RedisNode {
	t.Helper()
	n, err := startRedisNode(extra)
	if err != nil {
		Unavailable(t, "redis-server", err)
	}
	t.Cleanup(n.Kill)
	return n
}

// startRedisNode starts redis-server with extra arguments in a new temporary
// directory (no persistence unless extra asks for it). A "{port}" in extra
// is replaced by the port chosen.
func startRedisNode(extra []string) (*RedisNode, error) {
	bin, err := RedisServerBinary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "helmstore-redis-")
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	n := &RedisNode{Port: port, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: dir}
	listen := []string{"--port", strconv.Itoa(port)}
	for i, a := range extra {
		a = strings.ReplaceAll(a, "{port}", strconv.Itoa(port))
		extra[i] = a
		if a == "--tls-port" {
			listen = []string{"--port", "0"}
		}
	}
	n.args = append([]string{"--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no",
		"--daemonize", "no", "--logfile", filepath.Join(dir, "redis.log")}, listen...)
	n.args = append(n.args, extra...)
	if err := n.start(bin); err != nil {
		return nil, err
	}
	nodesMu.Lock()
	nodes = append(nodes, n)
	nodesMu.Unlock()
	return n, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (n *RedisNode) start(bin string) error {
	cmd := exec.Command(bin, n.args...)
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	go cmd.Wait()
	n.mu.Lock()
	n.cmd = cmd
	n.mu.Unlock()
	if !waitFor(n.Addr, 30*time.Second) {
		log, _ := os.ReadFile(filepath.Join(n.Dir, "redis.log"))
		n.Kill()
		return fmt.Errorf("started %s on %s but it does not answer: %s", bin, n.Addr, lastBytes(string(log), 800))
	}
	return nil
}

func lastBytes(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// Kill kills the server (SIGKILL: nothing is saved on the way out).
func (n *RedisNode) Kill() {
	n.mu.Lock()
	cmd := n.cmd
	n.cmd = nil
	n.mu.Unlock()
	if cmd == nil {
		return
	}
	terminate(cmd, true)
	for i := 0; i < 100 && reachable(n.Addr); i++ {
		time.Sleep(50 * time.Millisecond)
	}
}

// Restart starts the server again after Kill, with the same arguments and
// directory (what it persisted there, if anything, is loaded).
func (n *RedisNode) Restart() error {
	bin, err := RedisServerBinary()
	if err != nil {
		return err
	}
	return n.start(bin)
}

// Client returns a go-redis client connected to the node alone.
func (n *RedisNode) Client() *goredis.Client {
	return goredis.NewClient(&goredis.Options{Addr: n.Addr})
}

// StartTLSRedis starts a private redis-server that accepts only TLS, with a
// certificate for 127.0.0.1 signed by a CA made for it, stopped when t ends.
// It returns the node and the CA's PEM file. Clients need no certificate.
func StartTLSRedis(t testing.TB) (*RedisNode, string) {
	t.Helper()
	dir := t.TempDir()
	ca, err := writeCerts(dir)
	if err != nil {
		t.Fatal(err)
	}
	n := StartRedisNode(t, "--tls-port", "{port}", "--tls-cert-file", filepath.Join(dir, "server.pem"),
		"--tls-key-file", filepath.Join(dir, "server-key.pem"), "--tls-ca-cert-file", ca, "--tls-auth-clients", "no")
	return n, ca
}
