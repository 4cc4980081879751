package redis_test

import (
	"net/url"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/drivertest"
	"github.com/helmstore/helmstore/internal/testenv"
	"github.com/helmstore/helmstore/redis"
)

func openStore(t testing.TB, conn string, opts ...driver.Option) driver.Store {
	t.Helper()
	return drivertest.Open(t, redis.Name, conn, opts...)
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
	h := drivertest.ConnectionStringHarness(redis.Name, func(t testing.TB) string { return withPrefix(t, base(t)) }, opts...)
	h.Tamper = redis.Tamper
	return h
}

func TestConformanceStandalone(t *testing.T) {
	drivertest.Run(t, harness(testenv.Redis))
}
