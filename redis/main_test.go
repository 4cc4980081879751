package redis_test

import (
	"os"
	"testing"

	"github.com/helmstore/helmstore/internal/benchmarks"
	"github.com/helmstore/helmstore/internal/testenv/redisenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	redisenv.StopServers()
	benchmarks.DropHelmSQL()
	os.Exit(code)
}
