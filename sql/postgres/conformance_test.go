package postgres

import (
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/internal/sqltest"
	"github.com/helmstore/helmstore/internal/testenv"
)

func TestConformancePostgres(t *testing.T) {
	testenv.PostgresServer(t)
	drivertest.Run(t, sqltest.Harness("postgres", testenv.Postgres))
}
