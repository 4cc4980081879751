package redis_test

import (
	"sync"
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
	"github.com/helmstore/helmstore/redis"
)

// TestEncryptedAtRest scans every key of a store's prefix on the
// standalone server, whatever its type (drivertest.RunAtRest).
func TestEncryptedAtRest(t *testing.T) {
	var mu sync.Mutex
	conns := map[helm3.Store]string{}
	open := func(t *testing.T, conn string, opts ...helm3.Option) helm3.Store {
		s := openStore(t, conn, opts...)
		mu.Lock()
		conns[s] = conn
		mu.Unlock()
		return s
	}
	drivertest.RunAtRest(t, drivertest.AtRest{
		New: func(t *testing.T, opts ...helm3.Option) helm3.Store {
			return open(t, withPrefix(t, redisenv.URL(t)), opts...)
		},
		Again: func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			mu.Lock()
			conn := conns[s]
			mu.Unlock()
			return open(t, conn, opts...)
		},
		Holds: redis.Holds,
	})
}

// TestConformanceEncrypted runs the whole suite on the standalone server
// with encryption at rest on.
func TestConformanceEncrypted(t *testing.T) {
	drivertest.Run(t, harness(redisenv.URL, helm3.WithEncryptionKeys(drivertest.KeyURL(t))))
}
