package redis_test

import (
	"os"
	"testing"

	"github.com/helmstore/helmstore/internal/benchmarks"
	"github.com/helmstore/helmstore/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopRedisServers()
	benchmarks.DropHelmSQL()
	os.Exit(code)
}
