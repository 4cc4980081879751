package postgres

import (
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

func TestConformancePostgres(t *testing.T) {
	sqlenv.PostgresServer(t)
	drivertest.Run(t, harness(sqlenv.Postgres))
}

// Encryption at rest (package encryption): no plaintext in any row.
func TestEncryptedAtRest(t *testing.T) {
	sqlenv.PostgresServer(t)
	drivertest.RunAtRest(t, sqltest.AtRest("postgres", sqlenv.Postgres))
}

// The whole suite with encryption at rest on.
func TestConformancePostgresEncrypted(t *testing.T) {
	sqlenv.PostgresServer(t)
	drivertest.Run(t, harness(sqlenv.Postgres, helm3.WithEncryptionKeys(drivertest.KeyURL(t))))
}

// harness is sqltest's, with Confined through NamespaceAccess.
func harness(conn func(testing.TB) string, opts ...helm3.Option) drivertest.Harness {
	c := sqltest.Connections(Name, conn, opts...)
	c.Confine = sqltest.PostgresConfine(NamespaceAccess)
	return sqltest.HarnessOf(c)
}
