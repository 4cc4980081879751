package redis_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/redis"
)

// logs collects what a store logs.
type logs struct {
	mu    sync.Mutex
	lines []string
}

func (l *logs) log(format string, v ...interface{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, v...))
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

func TestOpenRefusesEvictingServer(t *testing.T) {
	n := redisenv.StartNode(t, "--maxmemory", "100mb", "--maxmemory-policy", "allkeys-lru")
	conn := "redis://" + n.Addr + "/0"
	_, err := helm3.Open(context.Background(), redis.Name, conn)
	if err == nil || !strings.Contains(err.Error(), "maxmemory-policy allkeys-lru") || !strings.Contains(err.Error(), "allow_eviction=true") {
		t.Fatalf("Open of a server that evicts keys: %v; want a refusal naming the policy and allow_eviction", err)
	}
	if redis.IsUnavailable(err) {
		t.Fatalf("a refusal is not unavailability: %v", err)
	}
	s, err := helm3.Open(context.Background(), redis.Name, conn+"?allow_eviction=true")
	if err != nil {
		t.Fatalf("Open with allow_eviction=true: %v", err)
	}
	defer s.Close()
	if err := s.Create("sh.helm.release.v1.app.v1", smallRelease("app", "default", 1, release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
}

func TestOpenWarnsWithoutPersistence(t *testing.T) {
	volatile := redisenv.StartNode(t) // save "" appendonly no
	var l logs
	s, err := helm3.Open(context.Background(), redis.Name, "redis://"+volatile.Addr, helm3.WithLog(l.log))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !strings.Contains(l.String(), "persists nothing") {
		t.Fatalf("no warning about a server that persists nothing; log:\n%s", l.String())
	}
	durable := redisenv.StartNode(t, "--appendonly", "yes")
	var l2 logs
	s, err = helm3.Open(context.Background(), redis.Name, "redis://"+durable.Addr, helm3.WithLog(l2.log))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if strings.Contains(l2.String(), "persists nothing") {
		t.Fatalf("warning about a server with AOF on; log:\n%s", l2.String())
	}
}

// An ACL user with a password, limited to its key prefix and denied CONFIG:
// the store opens (saying it cannot check the configuration) and works; a
// wrong password fails without showing either password.
func TestACLUser(t *testing.T) {
	n := redisenv.StartNode(t)
	admin := n.Client()
	defer admin.Close()
	ctx := context.Background()
	if err := admin.Do(ctx, "ACL", "SETUSER", "helm", "on", ">s3cret-pw", "~tenant-a:*", "+@all", "-@admin", "-config").Err(); err != nil {
		t.Fatal(err)
	}
	var l logs
	conn := "redis://helm:s3cret-pw@" + n.Addr + "/0?key_prefix=tenant-a"
	s, err := helm3.Open(ctx, redis.Name, conn, helm3.WithLog(l.log))
	if err != nil {
		t.Fatalf("Open as an ACL user: %v", err)
	}
	defer s.Close()
	if !strings.Contains(l.String(), "cannot read the server's configuration") {
		t.Fatalf("no note that CONFIG GET is denied; log:\n%s", l.String())
	}
	if strings.Contains(l.String(), "s3cret-pw") {
		t.Fatalf("the log shows the password:\n%s", l.String())
	}
	for v := 1; v <= 3; v++ {
		if err := upgrade(s, "default", "app", v); err != nil {
			t.Fatal(err)
		}
	}
	if n := history(t, s, "default", "app"); n != 3 {
		t.Fatalf("%d revisions, want 3", n)
	}
	// Another prefix is outside the user's keys: refused, and not as
	// "not found".
	other, err := helm3.Open(ctx, redis.Name, "redis://helm:s3cret-pw@"+n.Addr+"/0?key_prefix=tenant-b")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.Get("sh.helm.release.v1.app.v1")
	if err == nil || errors.Is(err, helm3.ErrReleaseNotFound) || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("Get outside the user's keys: %v, want a NOPERM error", err)
	}

	_, err = helm3.Open(ctx, redis.Name, "redis://helm:wrong-pw@"+n.Addr+"/0?key_prefix=tenant-a")
	if err == nil {
		t.Fatal("Open with a wrong password succeeded")
	}
	for _, pw := range []string{"wrong-pw", "s3cret-pw"} {
		if strings.Contains(err.Error(), pw) {
			t.Fatalf("error shows a password: %v", err)
		}
	}
}

// A server that does not answer is unavailable, never "not found", and the
// error never shows the password.
func TestConnectionFailure(t *testing.T) {
	port := testenv.FreePort(t)
	conn := fmt.Sprintf("redis://user:hunter2-pw@127.0.0.1:%d/0?dial_timeout=1s", port)
	_, err := helm3.Open(context.Background(), redis.Name, conn)
	if err == nil {
		t.Fatal("Open of a closed port succeeded")
	}
	if !redis.IsUnavailable(err) || errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("Open of a closed port: %v, want unavailable", err)
	}
	if strings.Contains(err.Error(), "hunter2-pw") {
		t.Fatalf("error shows the password: %v", err)
	}

	// A store whose server goes away.
	n := redisenv.StartNode(t)
	s := openStore(t, "redis://"+n.Addr+"/0?dial_timeout=1s&max_retries=1")
	defer s.Close()
	if err := s.Create("sh.helm.release.v1.app.v1", smallRelease("app", "default", 1, release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	n.Kill()
	for name, op := range map[string]func() error{
		"get":    func() error { _, err := s.Get("sh.helm.release.v1.app.v1"); return err },
		"query":  func() error { _, err := s.Query(map[string]string{"name": "app", "owner": "helm"}); return err },
		"list":   func() error { _, err := s.List(func(*release.Release) bool { return true }); return err },
		"delete": func() error { _, err := s.Delete("sh.helm.release.v1.app.v1"); return err },
		"update": func() error {
			return s.Update("sh.helm.release.v1.app.v1", smallRelease("app", "default", 1, release.StatusSuperseded))
		},
	} {
		err := op()
		if err == nil || errors.Is(err, helm3.ErrReleaseNotFound) || !redis.IsUnavailable(err) {
			t.Errorf("%s on a dead server: %v, want unavailable (never not found)", name, err)
		}
	}
}

func TestConnectionStrings(t *testing.T) {
	for _, c := range []struct{ conn, want string }{
		{"", "no connection string"},
		{"http://127.0.0.1:6379", "scheme"},
		{"redis://127.0.0.1:6379?key_prefix=a{b}", "key prefix"},
		{"redis://127.0.0.1:6379?allow_eviction=maybe", "allow_eviction"},
		{"redis://127.0.0.1:6379?tls_ca_file=/x.pem", "rediss://"},
		{"redis://127.0.0.1:6379?no_such_option=1", "no_such_option"},
		{"redis://u:pw-in-url@127.0.0.1:6379,?x=1", "not a URL"},
		{"redis://u:pw-in-url@127.0.0.1:6379,,127.0.0.1:6380", "empty address"},
	} {
		_, err := helm3.Open(context.Background(), redis.Name, c.conn)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q): %v, want an error about %s", c.conn, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "pw-in-url") {
			t.Errorf("Open(%q): error shows the password: %v", c.conn, err)
		}
	}
}
