package redis_test

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
)

func TestConformanceCluster(t *testing.T) {
	drivertest.Run(t, harness(redisenv.SharedCluster))
}

// TestClusterSlotMove moves the slot of a namespace to another primary, key
// batch by key batch, while releases in it are upgraded and read: every
// write succeeds (MOVED, ASK and TRYAGAIN followed) and every revision reads
// back whole afterwards.
func TestClusterSlotMove(t *testing.T) {
	c := redisenv.StartCluster(t, 3, 0)
	ns := testenv.UniqueName("moving-")
	s := openStore(t, withPrefix(t, c.URL())).Namespace(ns)
	defer s.Close()
	ctx := context.Background()

	const writers, revisions = 4, 12
	// Some history first, so the slot holds keys to move.
	for w := 0; w < writers; w++ {
		for v := 1; v <= 3; v++ {
			if err := upgrade(s, ns, fmt.Sprintf("app-%d", w), v); err != nil {
				t.Fatal(err)
			}
		}
	}

	cc := c.Client()
	defer cc.Close()
	slot, err := cc.ClusterKeySlot(ctx, "x{"+ns+"}").Result()
	if err != nil {
		t.Fatal(err)
	}
	src, err := cc.MasterForKey(ctx, "x{"+ns+"}")
	if err != nil {
		t.Fatal(err)
	}
	srcID, err := src.ClusterMyID(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var dst *goredis.Client
	var dstID string
	var masters []*goredis.Client
	var mu sync.Mutex
	err = cc.ForEachMaster(ctx, func(ctx context.Context, m *goredis.Client) error {
		id, err := m.ClusterMyID(ctx).Result()
		mu.Lock()
		defer mu.Unlock()
		masters = append(masters, m)
		if err == nil && id != srcID && dst == nil {
			dst, dstID = m, id
		}
		return err
	})
	if err != nil || dst == nil {
		t.Fatalf("no other primary: %v", err)
	}

	var wg sync.WaitGroup
	errs := make(chan error, writers*revisions)
	start := make(chan struct{})
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			<-start
			name := fmt.Sprintf("app-%d", w)
			for v := 4; v <= revisions; v++ {
				if err := upgrade(s, ns, name, v); err != nil {
					errs <- err
					return
				}
				if _, err := s.Get(fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, v)); err != nil {
					errs <- fmt.Errorf("get revision %d of %s: %w", v, name, err)
					return
				}
			}
		}(w)
	}

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(dst.Do(ctx, "CLUSTER", "SETSLOT", slot, "IMPORTING", srcID).Err())
	must(src.Do(ctx, "CLUSTER", "SETSLOT", slot, "MIGRATING", dstID).Err())
	close(start)
	host, port, _ := net.SplitHostPort(dst.Options().Addr)
	moved := 0
	for {
		keys, err := src.ClusterGetKeysInSlot(ctx, int(slot), 3).Result()
		must(err)
		if len(keys) == 0 {
			break
		}
		args := []interface{}{"MIGRATE", host, port, "", 0, 10000, "REPLACE", "KEYS"}
		for _, k := range keys {
			args = append(args, k)
		}
		must(src.Do(ctx, args...).Err())
		moved += len(keys)
		time.Sleep(20 * time.Millisecond) // let writes land between batches
	}
	for _, m := range masters {
		must(m.Do(ctx, "CLUSTER", "SETSLOT", slot, "NODE", dstID).Err())
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if moved == 0 {
		t.Fatal("no key was moved")
	}
	if n, err := src.ClusterCountKeysInSlot(ctx, int(slot)).Result(); err != nil || n != 0 {
		t.Fatalf("the old primary still holds %d keys of slot %d (%v)", n, slot, err)
	}
	if n, err := dst.ClusterCountKeysInSlot(ctx, int(slot)).Result(); err != nil || n == 0 {
		t.Fatalf("the new primary holds no key of slot %d (%v)", slot, err)
	}
	for w := 0; w < writers; w++ {
		if n := history(t, s, ns, fmt.Sprintf("app-%d", w)); n != revisions {
			t.Errorf("app-%d has %d revisions, want %d", w, n, revisions)
		}
	}
	t.Logf("moved %d keys of slot %d while %d writers upgraded", moved, slot, writers)
}
