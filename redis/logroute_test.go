package redis_test

import (
	"bytes"
	"context"
	"errors"
	"log"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/redis"
)

// stdLog captures the process's standard log until the test ends.
type stdLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *stdLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *stdLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func captureStdLog(t *testing.T) *stdLog {
	l := &stdLog{}
	old := log.Writer()
	log.SetOutput(l)
	t.Cleanup(func() { log.SetOutput(old) })
	return l
}

// A go-redis line logged with the context of a store's operation goes to
// that store's log only, with another store open: here the Sentinel's
// "GetMasterAddrByName failed" while a store opened with a master name the
// Sentinel does not know looks for its primary.
func TestGoRedisLogsByContext(t *testing.T) {
	sen := redisenv.StartSentinel(t, 0, 1, "", "")
	std := captureStdLog(t)
	var la, lb logs
	sb, err := helm3.Open(context.Background(), redis.Name, redisenv.URL(t), helm3.WithLog(lb.log))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	conn := strings.Replace(sen.URL(), "master_name="+redisenv.SentinelMaster, "master_name=nosuchmaster", 1)
	if sa, err := helm3.Open(context.Background(), redis.Name, conn, helm3.WithLog(la.log), helm3.WithTimeout(5*time.Second)); err == nil {
		sa.Close()
		t.Fatal("Open with a master name the Sentinel does not know succeeded")
	}
	const line = "GetMasterAddrByName"
	if !strings.Contains(la.String(), line) {
		t.Fatalf("the store's log lacks go-redis's %s line:\n%s", line, la.String())
	}
	if strings.Contains(lb.String(), line) {
		t.Fatalf("another store's log has the %s line:\n%s", line, lb.String())
	}
	if strings.Contains(std.String(), line) {
		t.Fatalf("the standard log has the %s line of a store:\n%s", line, std.String())
	}
}

// A go-redis line that names no store (logged without an operation's
// context, by a Cluster client routing reads by latency whose every node
// is down: "all nodes are marked as failed", or "pings to all nodes are
// failing") goes to the process's standard log, not to the log
// of either of two open stores.
func TestGoRedisLogsUnattributed(t *testing.T) {
	c := redisenv.StartCluster(t, 3, 1)
	std := captureStdLog(t)
	var la, lb logs
	sa, err := helm3.Open(context.Background(), redis.Name, c.URL()+"?route_by_latency=true&dial_timeout=200ms", helm3.WithLog(la.log), helm3.WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	sb, err := helm3.Open(context.Background(), redis.Name, redisenv.URL(t), helm3.WithLog(lb.log))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	// go-redis routes a read to the closest node of its slot once it knows
	// the command reads (from COMMAND, asked at its first command).
	if _, err := sa.Get("sh.helm.release.v1.app.v1"); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatal(err)
	}
	for _, n := range c.Nodes {
		n.Kill()
	}
	if _, err := sa.Get("sh.helm.release.v1.app.v1"); !redis.IsUnavailable(err) {
		t.Fatalf("Get on a Cluster whose nodes are all down: %v", err)
	}
	lines := []string{"all nodes are marked as failed", "pings to all nodes are failing"}
	has := func(s string) bool { return strings.Contains(s, lines[0]) || strings.Contains(s, lines[1]) }
	if !has(std.String()) {
		t.Fatalf("the standard log lacks go-redis's %q lines:\n%s\nthe store's log:\n%s", lines, std.String(), la.String())
	}
	for who, l := range map[string]*logs{"the Cluster store's": &la, "the other store's": &lb} {
		if has(l.String()) {
			t.Errorf("%s log has one of the %q lines, which name no store", who, lines)
		}
	}
	if !strings.Contains(la.String(), "failed to dial") {
		t.Errorf("the Cluster store's log lacks go-redis's dial failures:\n%s", la.String())
	}
}
