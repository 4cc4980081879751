package cosmos

import (
	"os"
	"testing"

	"github.com/helmstore/helmstore/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.StopCosmos()
	os.Exit(code)
}
