package mysql

import (
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

func TestConformanceMySQL(t *testing.T) {
	sqlenv.MySQLServer(t)
	drivertest.Run(t, harness(sqlenv.MySQL))
}

// MySQL 8 differs from MariaDB (no RETURNING, other collations and
// defaults); it runs where a Docker engine does, or at HELMSTORE_TEST_MYSQL8.
func TestConformanceMySQL8(t *testing.T) {
	sqlenv.MySQL8(t)
	drivertest.Run(t, harness(sqlenv.MySQL8))
}

// Encryption at rest (package encryption): no plaintext in any row.
func TestEncryptedAtRest(t *testing.T) {
	sqlenv.MySQLServer(t)
	drivertest.RunAtRest(t, sqltest.AtRest("mysql", sqlenv.MySQL))
}

// The whole suite with encryption at rest on.
func TestConformanceMySQLEncrypted(t *testing.T) {
	sqlenv.MySQLServer(t)
	drivertest.Run(t, harness(sqlenv.MySQL, helm3.WithEncryptionKeys(drivertest.KeyURL(t))))
}

// harness is sqltest's, with Confined through NamespaceAccess.
func harness(conn func(testing.TB) string, opts ...helm3.Option) drivertest.Harness {
	c := sqltest.Connections(Name, conn, opts...)
	c.Confine = sqltest.MySQLConfine(NamespaceAccess)
	return sqltest.HarnessOf(c)
}
