package redis_test

import (
	"testing"

	"github.com/helmstore/helmstore/internal/testing/benchmarks"
	"github.com/helmstore/helmstore/internal/testing/testenv/redisenv"
)

// TestMain stops the package's Redis servers after the tests, and drops
// the schema of the benchmarks' Helm SQL driver.
func TestMain(m *testing.M) { benchmarks.Main(m, redisenv.StopServers) }
