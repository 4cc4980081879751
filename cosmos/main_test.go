package cosmos

import (
	"testing"

	"github.com/helmstore/helmstore/internal/testing/benchmarks"
	"github.com/helmstore/helmstore/internal/testing/testenv/cosmosenv"
)

// TestMain stops the package's Cosmos DB emulator after the tests, and
// drops the schema of the benchmarks' Helm SQL driver.
func TestMain(m *testing.M) { benchmarks.Main(m, cosmosenv.Stop) }
