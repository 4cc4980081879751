package redis_test

import (
	"os"
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopRedisServers()
	drivertest.DropHelmSQL()
	os.Exit(code)
}
