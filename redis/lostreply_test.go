package redis_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/redis"
)

// largeRelease is revision 1 of name with about size bytes of values that
// do not compress.
func largeRelease(name string, size int) *release.Release {
	r := smallRelease(name, "default", 1, release.StatusDeployed)
	b := make([]byte, size*3/4)
	_, _ = rand.Read(b)
	r.Config["blob"] = base64.StdEncoding.EncodeToString(b)
	return r
}

// The case, made exact: the reply of a Delete that carries a large
// release (16 MiB of values, read with no part cache) is lost after the
// server applied it, at each message of the Delete in turn. The Delete
// returns the release whole (the resent script answers from its record)
// or fails as unavailable, never "not found"; the release is gone; and no
// record holding its frames is left behind.
func TestLostDeleteReplyLargeRelease(t *testing.T) {
	n := redisenv.StartNode(t)
	conn := withPrefix(t, "redis://"+n.Addr+"/0")
	prefix := prefixOf(t, conn)
	s := openStore(t, conn)
	defer s.Close()
	loss := &testenv.ReplyLoss{}
	p := testenv.NewLossyProxy(t, n.Addr, loss)
	ps, err := redis.OpenProxied(conn, func(string) string { return p.Addr }, helm3.WithCacheBytes(0), helm3.WithTimeout(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Close()
	admin := n.Client()
	defer admin.Close()
	ctx := context.Background()
	r := largeRelease("big", 16<<20)
	key := driver.MakeKey("big", 1)
	lostAfterApply := 0
	for k := 1; k <= 4; k++ {
		if err := s.Create(key, r); err != nil {
			t.Fatal(err)
		}
		loss.Arm(k)
		got, err := ps.Delete(key)
		fired := loss.Disarm()
		switch {
		case errors.Is(err, helm3.ErrReleaseNotFound):
			t.Fatalf("Delete whose reply to message %d was lost: %v", k, err)
		case err == nil:
			if got.Config["blob"] != r.Config["blob"] {
				t.Fatalf("Delete whose reply to message %d was lost returned another release", k)
			}
		case !redis.IsUnavailable(err):
			t.Fatalf("Delete whose reply to message %d was lost: %v; want the release, or unavailable", k, err)
		}
		if _, err := s.Get(key); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("Get after the Delete (reply to message %d lost): %v", k, err)
		}
		if fired && err == nil {
			lostAfterApply++
		}
		records, err := admin.Keys(ctx, prefix+":{default}:o:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range records {
			if size, err := admin.StrLen(ctx, rec).Result(); err != nil || size > 1<<10 {
				t.Fatalf("a write record of %d bytes is left after the Delete (reply to message %d lost): %v", size, k, err)
			}
		}
	}
	if lostAfterApply == 0 {
		t.Fatal("no Delete lost a reply and then succeeded: the test lost nothing")
	}
}

// A Delete of a large release through a store whose read_timeout is far
// too short to read it (the 128 MiB with read_timeout=1s, scaled
// down): whatever it answers, it never says "not found", and it leaves no
// record holding the release's frames (the script once kept them in its
// reply's record, for five minutes, when no reply of it could be read).
func TestDeleteTooLargeForReadTimeout(t *testing.T) {
	n := redisenv.StartNode(t)
	conn := withPrefix(t, "redis://"+n.Addr+"/0")
	prefix := prefixOf(t, conn)
	s := openStore(t, conn)
	defer s.Close()
	// Open's own replies are small, but a loaded machine can miss 5 ms:
	// a few tries.
	var slow helm3.Store
	var err error
	for try := 0; slow == nil; try++ {
		if slow, err = helm3.Open(context.Background(), redis.Name, conn+"&read_timeout=5ms", helm3.WithCacheBytes(0)); err != nil && try == 4 {
			t.Fatal(err)
		}
	}
	defer slow.Close()
	admin := n.Client()
	defer admin.Close()
	ctx := context.Background()
	r := largeRelease("big", 16<<20)
	key := driver.MakeKey("big", 1)
	for i := 0; i < 3; i++ {
		if _, err := s.Get(key); errors.Is(err, helm3.ErrReleaseNotFound) {
			if err := s.Create(key, r); err != nil {
				t.Fatal(err)
			}
		}
		got, derr := slow.Delete(key)
		switch {
		case errors.Is(derr, helm3.ErrReleaseNotFound):
			t.Fatalf("Delete: %v", derr)
		case derr == nil:
			if got.Config["blob"] != r.Config["blob"] {
				t.Fatal("Delete returned another release")
			}
		case !redis.IsUnavailable(derr):
			t.Fatalf("Delete: %v; want the release, or unavailable", derr)
		}
		// Gone if the Delete said so; else gone or whole.
		left, err := s.Get(key)
		switch {
		case errors.Is(err, helm3.ErrReleaseNotFound):
		case err != nil:
			t.Fatalf("Get after the Delete (error: %v): %v", derr, err)
		case derr == nil:
			t.Fatal("Get finds the release the Delete returned")
		case left.Config["blob"] != r.Config["blob"]:
			t.Fatalf("Get after the Delete (error: %v) returns another release", derr)
		}
		records, err := admin.Keys(ctx, prefix+":{default}:o:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, rec := range records {
			if size, err := admin.StrLen(ctx, rec).Result(); err != nil || size > 1<<10 {
				t.Fatalf("Delete (error: %v) left a write record of %d bytes (%v)", derr, size, err)
			}
		}
	}
}

// A write's record outlives every resend of its script, which can come as
// late as the operation's bound: it is kept at least twice the store's
// timeout, and at least five minutes. Checked on the records a Create, an
// Update and a Delete leave, for the default timeout, a long one and none.
func TestWriteRecordOutlivesTheTimeout(t *testing.T) {
	n := redisenv.StartNode(t)
	admin := n.Client()
	defer admin.Close()
	ctx := context.Background()
	for _, c := range []struct {
		what    string
		opts    []helm3.Option
		atLeast time.Duration
	}{
		{"the default timeout (2 min)", nil, 5 * time.Minute},
		{"WithTimeout(10m)", []helm3.Option{helm3.WithTimeout(10 * time.Minute)}, 20 * time.Minute},
		{"WithTimeout(2h)", []helm3.Option{helm3.WithTimeout(2 * time.Hour)}, 4 * time.Hour},
		{"no timeout", []helm3.Option{helm3.WithTimeout(0)}, 5 * time.Minute},
	} {
		conn := withPrefix(t, "redis://"+n.Addr+"/0")
		s := openStore(t, conn, c.opts...)
		if err := upgrade(s, "default", "app", 1); err != nil {
			t.Fatal(err)
		}
		if err := upgrade(s, "default", "app", 2); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Delete(driver.MakeKey("app", 1)); err != nil {
			t.Fatal(err)
		}
		s.Close()
		records, err := admin.Keys(ctx, prefixOf(t, conn)+":{default}:o:*").Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(records) != 4 { // two Creates, an Update, a Delete
			t.Fatalf("%s: %d write records, want 4", c.what, len(records))
		}
		for _, rec := range records {
			ttl, err := admin.PTTL(ctx, rec).Result()
			if err != nil {
				t.Fatal(err)
			}
			// The time since the write, generously, off the bound.
			if ttl < c.atLeast-time.Minute || ttl > c.atLeast {
				t.Errorf("%s: record %s expires in %v, want %v", c.what, rec, ttl, c.atLeast)
			}
		}
	}
}
