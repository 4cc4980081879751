package redis_test

import (
	"os"
	"testing"

	"github.com/helmstore/helmstore/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopRedisServers()
	if helmSQL.drop != nil {
		helmSQL.db.Close()
		helmSQL.drop()
	}
	os.Exit(code)
}
