package redis

import (
	"context"
	"fmt"
	"strings"
	"sync"

	goredis "github.com/redis/go-redis/v9"
)

// check pings the server (every primary, in Cluster) and checks that it will
// keep what is written: a maxmemory-policy other than noeviction lets Redis
// delete keys, so releases would vanish silently — refused unless
// allowEviction; a server that persists nothing (no RDB snapshots, no AOF)
// loses every release on restart — logged. Where CONFIG GET is not allowed
// (managed services, ACL users without it), that is logged and the store
// opens.
func (b *redisBackend) check(ctx context.Context, allowEviction bool) error {
	ctx = b.logged(ctx)
	var mu sync.Mutex
	var problems []string
	one := func(ctx context.Context, c *goredis.Client) error {
		addr := c.Options().Addr
		if err := c.Ping(ctx).Err(); err != nil {
			return unavailable(fmt.Errorf("ping %s: %w", addr, err))
		}
		cfg, err := c.ConfigGet(ctx, "*").Result()
		if err == nil && len(cfg) == 0 {
			err = fmt.Errorf("CONFIG GET returned nothing")
		}
		if err != nil {
			if isTransport(err) {
				return unavailable(fmt.Errorf("CONFIG GET on %s: %w", addr, err))
			}
			b.log("helmstore: redis %s: cannot read the server's configuration (%v): not checking that maxmemory-policy is noeviction and that it persists data; make sure it does, or releases can be lost", addr, err)
			return nil
		}
		if p, ok := cfg["maxmemory-policy"]; ok && p != "noeviction" && !allowEviction {
			mu.Lock()
			problems = append(problems, fmt.Sprintf("%s has maxmemory-policy %s, under which Redis deletes keys when memory runs short: releases would disappear silently; set maxmemory-policy noeviction, or add %s=true to the connection string to use it anyway", addr, p, paramAllowEviction))
			mu.Unlock()
		}
		if strings.TrimSpace(cfg["save"]) == "" && cfg["appendonly"] != "yes" {
			b.log("helmstore: warning: redis %s persists nothing (save is empty, appendonly is no): every release is lost when the server restarts", addr)
		}
		return nil
	}
	var err error
	switch c := b.c.(type) {
	case *goredis.ClusterClient:
		err = c.ForEachMaster(ctx, one)
	case *goredis.Client:
		err = one(ctx, c)
	default:
		err = fmt.Errorf("unexpected client %T", b.c)
	}
	if err != nil {
		return unavailable(err)
	}
	if len(problems) > 0 {
		return fmt.Errorf("refusing to open: %s", strings.Join(problems, "; "))
	}
	return nil
}
