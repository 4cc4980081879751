package redis_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/redis"
)

// A wrong password, none where one is required, and an operation an ACL
// denies are driver.ErrAccessDenied, not unavailability nor "not found",
// and never show the password; redis://SECRET@host (a password alone, as
// redis-cli reads it) authenticates with SECRET.
func TestAccessDenied(t *testing.T) {
	pw := testenv.UniqueName("Pw")
	n := redisenv.StartNode(t, "--requirepass", pw)
	ctx := context.Background()
	admin := n.Client()
	defer admin.Close()
	if err := admin.Do(ctx, "AUTH", pw).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "ACL", "SETUSER", "helm", "on", ">"+pw, "~tenant-a:*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	wrong := testenv.UniqueName("Wrong")
	for what, conn := range map[string]string{
		"wrong password":                   "redis://:" + wrong + "@" + n.Addr + "/0",
		"wrong ACL password":               "redis://helm:" + wrong + "@" + n.Addr + "/0",
		"no password":                      "redis://" + n.Addr + "/0",
		"wrong password in the user slot":  "redis://" + wrong + "@" + n.Addr + "/0",
		"wrong password, Cluster form":     "redis://:" + wrong + "@" + n.Addr + "," + n.Addr + "/0",
		"wrong password in the user slot,": "redis://" + wrong + "@" + n.Addr + "," + n.Addr + "/0",
	} {
		_, err := helm3.Open(ctx, redis.Name, conn)
		if !errors.Is(err, helm3.ErrAccessDenied) || redis.IsUnavailable(err) || errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Errorf("Open with a %s: %v; want helm3.ErrAccessDenied only", what, err)
			continue
		}
		// helm3.Open's error quotes the connection string as Redact
		// gives it; what this package says is its cause.
		if cause := errors.Unwrap(err).Error(); strings.Contains(cause, wrong) || strings.Contains(cause, pw) {
			t.Errorf("Open with a %s: the error shows a password: %v", what, cause)
		}
		t.Logf("%s: %v", what, errors.Unwrap(err))
	}
	s, err := helm3.Open(ctx, redis.Name, "redis://"+pw+"@"+n.Addr+"/0?key_prefix="+testenv.UniqueName("t"))
	if err != nil {
		t.Fatalf("Open with the password in the user slot: %v", err)
	}
	defer s.Close()
	if err := s.Create("sh.helm.release.v1.app.v1", smallRelease("app", "default", 1, release.StatusDeployed)); err != nil {
		t.Fatal(err)
	}
	// An ACL user outside its keys.
	other, err := helm3.Open(ctx, redis.Name, "redis://helm:"+pw+"@"+n.Addr+"/0?key_prefix=tenant-b")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for what, op := range map[string]func() error{
		"get": func() error { _, err := other.Get("sh.helm.release.v1.app.v1"); return err },
		"create": func() error {
			return other.Create("sh.helm.release.v1.app.v1", smallRelease("app", "default", 1, release.StatusDeployed))
		},
		"list": func() error {
			_, err := other.Namespace("").List(func(*release.Release) bool { return true })
			return err
		},
	} {
		err := op()
		if !errors.Is(err, helm3.ErrAccessDenied) || redis.IsUnavailable(err) || errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Errorf("%s outside the ACL user's keys: %v; want helm3.ErrAccessDenied", what, err)
		}
	}
}

// go-redis's own log lines (its pool's "failed to dial") go to the log of
// the store whose connection failed, not to the standard logger, and not to
// another store's log.
func TestGoRedisLogsToTheStore(t *testing.T) {
	a, b := redisenv.StartNode(t), redisenv.StartNode(t)
	var la, lb logs
	sa, err := helm3.Open(context.Background(), redis.Name, "redis://"+a.Addr+"/0?dial_timeout=1s", helm3.WithLog(la.log))
	if err != nil {
		t.Fatal(err)
	}
	defer sa.Close()
	sb, err := helm3.Open(context.Background(), redis.Name, "redis://"+b.Addr+"/0", helm3.WithLog(lb.log))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	a.Kill()
	if _, err := sa.Get("sh.helm.release.v1.app.v1"); !redis.IsUnavailable(err) {
		t.Fatalf("Get on a dead server: %v", err)
	}
	if !strings.Contains(la.String(), "failed to dial") || !strings.Contains(la.String(), a.Addr) {
		t.Fatalf("the store's log lacks go-redis's dial failure:\n%s", la.String())
	}
	if strings.Contains(lb.String(), "failed to dial") {
		t.Fatalf("another store's log has the dial failure:\n%s", lb.String())
	}
	if _, err := sb.Get("sh.helm.release.v1.app.v1"); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatal(err)
	}
}
