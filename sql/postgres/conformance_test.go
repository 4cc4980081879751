package postgres

import (
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/internal/testenv"
	"github.com/helmstore/helmstore/sql/sqltest"
)

func TestConformancePostgres(t *testing.T) {
	testenv.PostgresServer(t)
	drivertest.Run(t, sqltest.Harness("postgres", testenv.Postgres))
}
