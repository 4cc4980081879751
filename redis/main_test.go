package redis_test

import (
	"os"
	"testing"

	"github.com/helmstore/helmstore/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopRedisServers()
	os.Exit(code)
}
