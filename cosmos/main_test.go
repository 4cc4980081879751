package cosmos

import (
	"os"
	"testing"

	"github.com/helmstore/helmstore/internal/benchmarks"
	"github.com/helmstore/helmstore/internal/testenv/cosmosenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	cosmosenv.Stop()
	benchmarks.DropHelmSQL() // the schema of the benchmarks' Helm SQL driver
	os.Exit(code)
}
