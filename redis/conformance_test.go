package redis_test

import (
	"context"
	"net/url"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/drivertest"
	"github.com/helmstore/helmstore/internal/testenv"
	"github.com/helmstore/helmstore/redis"
)

func openStore(t testing.TB, conn string, opts ...driver.Option) driver.Store {
	t.Helper()
	s, err := driver.Open(context.Background(), redis.Name, conn, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// withPrefix returns conn with a fresh key prefix: stores opened on it see
// only each other.
func withPrefix(t testing.TB, conn string) string {
	t.Helper()
	u, err := url.Parse(conn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("key_prefix", testenv.UniqueName("helmstore-test-"))
	u.RawQuery = q.Encode()
	return u.String()
}

// harness returns the conformance harness over the server at base: a new
// key prefix for each Open, another client over it for Reopen.
func harness(base func(t testing.TB) string, opts ...driver.Option) drivertest.Harness {
	var mu sync.Mutex
	conns := map[driver.Store]string{}
	return drivertest.Harness{
		Open: func(t *testing.T) driver.Store {
			c := withPrefix(t, base(t))
			s := openStore(t, c, opts...)
			mu.Lock()
			conns[s] = c
			mu.Unlock()
			return s
		},
		Reopen: func(t *testing.T, s driver.Store, opts ...driver.Option) driver.Store {
			mu.Lock()
			c, ok := conns[s]
			mu.Unlock()
			if !ok {
				t.Fatal("Reopen of a store Open did not return")
			}
			return openStore(t, c, opts...)
		},
		Tamper: redis.Tamper,
	}
}

func TestConformanceStandalone(t *testing.T) {
	drivertest.Run(t, harness(testenv.Redis))
}
