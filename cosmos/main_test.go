package cosmos

import (
	"os"
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopCosmos()
	drivertest.DropHelmSQL() // the schema of the benchmarks' Helm SQL driver
	os.Exit(code)
}
