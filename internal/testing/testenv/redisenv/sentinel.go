package redisenv

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// SentinelMaster is the name under which the Sentinels StartSentinel
// starts monitor their primary.
const SentinelMaster = "helmstore"

// Sentinel is a Sentinel-managed Redis of private processes on
// loopback ports: a primary, its replicas, and Sentinels watching them.
type Sentinel struct {
	// Servers in the order started: the first primary, then its replicas
	// (a failover changes the roles: see Primary).
	Servers []*Node
	// Sentinels, each a redis-server --sentinel with its own config file.
	Sentinels []*Node
	// Password is the servers' password (requirepass and masterauth);
	// SentinelPassword the Sentinels' own. "" for none.
	Password, SentinelPassword string
}

// StartSentinel starts a primary with replicas replicas and sentinels
// Sentinels (quorum: a majority of them), each on a free loopback port,
// stopped when t ends; the servers ask for password and the Sentinels for
// sentinelPassword when not "". It returns once every replica is in sync
// and every Sentinel knows the primary, the replicas and the other
// Sentinels, so that a failover can start as soon as the primary fails.
// Sentinels decide the primary is down after a second without answer.
func StartSentinel(t testing.TB, replicas, sentinels int, password, sentinelPassword string) *Sentinel {
	t.Helper()
	s, err := startRedisSentinel(replicas, sentinels, password, sentinelPassword)
	if err != nil {
		testenv.Unavailable(t, "Redis Sentinel", err)
	}
	t.Cleanup(s.kill)
	return s
}

func (s *Sentinel) kill() {
	for _, n := range append(append([]*Node(nil), s.Sentinels...), s.Servers...) {
		n.Kill()
	}
}

func startRedisSentinel(replicas, sentinels int, password, sentinelPassword string) (*Sentinel, error) {
	s := &Sentinel{Password: password, SentinelPassword: sentinelPassword}
	fail := func(err error) (*Sentinel, error) {
		s.kill()
		return nil, err
	}
	var auth []string
	if password != "" {
		auth = []string{"--requirepass", password, "--masterauth", password}
	}
	for i := 0; i <= replicas; i++ {
		extra := append([]string(nil), auth...)
		if i > 0 {
			extra = append(extra, "--replicaof", "127.0.0.1", strconv.Itoa(s.Servers[0].Port))
		}
		n, err := startRedisNode(extra)
		if err != nil {
			return fail(err)
		}
		n.password = password
		s.Servers = append(s.Servers, n)
	}
	if err := s.waitSynced(30 * time.Second); err != nil {
		return fail(err)
	}
	var conf strings.Builder
	fmt.Fprintf(&conf, "sentinel monitor %s 127.0.0.1 %d %d\n", SentinelMaster, s.Servers[0].Port, sentinels/2+1)
	fmt.Fprintf(&conf, "sentinel down-after-milliseconds %s 1000\n", SentinelMaster)
	fmt.Fprintf(&conf, "sentinel failover-timeout %s 10000\n", SentinelMaster)
	if password != "" {
		fmt.Fprintf(&conf, "sentinel auth-pass %s %s\n", SentinelMaster, password)
	}
	if sentinelPassword != "" {
		fmt.Fprintf(&conf, "requirepass %s\nsentinel sentinel-pass %s\n", sentinelPassword, sentinelPassword)
	}
	for i := 0; i < sentinels; i++ {
		n, err := startRedisProcess(conf.String(), []string{"--sentinel"})
		if err != nil {
			return fail(err)
		}
		n.password = sentinelPassword
		s.Sentinels = append(s.Sentinels, n)
	}
	if err := s.waitSentinels(replicas, sentinels, 60*time.Second); err != nil {
		return fail(err)
	}
	return s, nil
}

// waitSynced waits until every running replica's link to its primary is up.
func (s *Sentinel) waitSynced(d time.Duration) error {
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		last = ""
		for _, n := range s.Servers {
			if !n.Running() {
				continue
			}
			repl, err := nodeInfo(n, "replication")
			if err != nil {
				last = fmt.Sprintf("%s: %v", n.Addr, err)
			} else if strings.Contains(repl, "role:slave") && !strings.Contains(repl, "master_link_status:up") {
				last = n.Addr + ": replica not in sync"
			}
		}
		if last == "" {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("the Sentinel-managed replicas did not sync: %s", last)
}

// waitSentinels waits until every Sentinel sees the primary up, with
// replicas replicas and the other Sentinels.
func (s *Sentinel) waitSentinels(replicas, sentinels int, d time.Duration) error {
	want := map[string]string{"flags": "master", "num-slaves": strconv.Itoa(replicas), "num-other-sentinels": strconv.Itoa(sentinels - 1)}
	deadline := time.Now().Add(d)
	last := ""
	for time.Now().Before(deadline) {
		last = ""
		for _, n := range s.Sentinels {
			m, err := sentinelMaster(n)
			if err != nil {
				last = fmt.Sprintf("%s: %v", n.Addr, err)
				break
			}
			for k, v := range want {
				if m[k] != v {
					last = fmt.Sprintf("Sentinel %s: %s is %q, want %q", n.Addr, k, m[k], v)
				}
			}
		}
		if last == "" {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("the Sentinels did not get ready: %s", last)
}

// sentinelMaster returns what Sentinel n says of the primary (SENTINEL
// MASTER's field-value pairs).
func sentinelMaster(n *Node) (map[string]string, error) {
	cl := n.Client()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r, err := cl.Do(ctx, "SENTINEL", "MASTER", SentinelMaster).Result()
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	switch r := r.(type) {
	case []interface{}:
		for i := 0; i+1 < len(r); i += 2 {
			m[fmt.Sprint(r[i])] = fmt.Sprint(r[i+1])
		}
	case map[interface{}]interface{}:
		for k, v := range r {
			m[fmt.Sprint(k)] = fmt.Sprint(v)
		}
	default:
		return nil, fmt.Errorf("SENTINEL MASTER answered %T", r)
	}
	return m, nil
}

func nodeInfo(n *Node, section string) (string, error) {
	cl := n.Client()
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return cl.Info(ctx, section).Result()
}

// URL returns the redis backend's Sentinel connection string: the
// Sentinels' addresses, the Sentinels' password in the URL's user info, the
// master name and the servers' password as parameters, database 0.
func (s *Sentinel) URL() string {
	addrs := make([]string, len(s.Sentinels))
	for i, n := range s.Sentinels {
		addrs[i] = n.Addr
	}
	u := url.URL{Scheme: "redis", Host: strings.Join(addrs, ","), Path: "/0"}
	if s.SentinelPassword != "" {
		u.User = url.UserPassword("", s.SentinelPassword)
	}
	q := url.Values{"master_name": {SentinelMaster}}
	if s.Password != "" {
		q.Set("password", s.Password)
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Primary returns the server every running Sentinel names as the primary,
// or an error when they do not agree (yet) or name none of s.Servers.
func (s *Sentinel) Primary() (*Node, error) {
	addr := ""
	for _, n := range s.Sentinels {
		if !n.Running() {
			continue
		}
		m, err := sentinelMaster(n)
		if err != nil {
			return nil, fmt.Errorf("the Sentinel at %s: %w", n.Addr, err)
		}
		a := m["ip"] + ":" + m["port"]
		if addr != "" && a != addr {
			return nil, fmt.Errorf("the Sentinels disagree: %s and %s", addr, a)
		}
		addr = a
	}
	for _, n := range s.Servers {
		if n.Addr == addr {
			return n, nil
		}
	}
	return nil, fmt.Errorf("the Sentinels name %q, none of the servers", addr)
}

// WaitFailover waits until every running Sentinel names a primary other
// than old that is running and answers ROLE as a primary, and returns it.
func (s *Sentinel) WaitFailover(old *Node, d time.Duration) (*Node, error) {
	deadline := time.Now().Add(d)
	var last error
	for time.Now().Before(deadline) {
		p, err := s.Primary()
		if err == nil && p == old {
			err = errors.New("the Sentinels still name " + old.Addr)
		}
		if err == nil && !p.Running() {
			err = errors.New("the Sentinels name " + p.Addr + ", which is not running")
		}
		if err == nil {
			var role string
			if role, err = nodeInfo(p, "replication"); err == nil && !strings.Contains(role, "role:master") {
				err = errors.New(p.Addr + " is not a primary yet")
			}
		}
		if err == nil {
			return p, nil
		}
		last = err
		time.Sleep(200 * time.Millisecond)
	}
	return nil, fmt.Errorf("no failover within %s: %v", d, last)
}

// WaitReplicated waits until every running replica has applied everything
// its primary has, so the primary can be killed without losing what was
// written before.
func (s *Sentinel) WaitReplicated(d time.Duration) error {
	if err := s.waitSynced(d); err != nil {
		return err
	}
	return waitReplicated(s.Servers, d)
}
