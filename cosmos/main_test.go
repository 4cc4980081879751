package cosmos

import (
	"os"
	"testing"

	"github.com/helmstore/helmstore/internal/benchmarks"
	"github.com/helmstore/helmstore/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopCosmos()
	benchmarks.DropHelmSQL() // the schema of the benchmarks' Helm SQL driver
	os.Exit(code)
}
