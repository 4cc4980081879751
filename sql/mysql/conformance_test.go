package mysql

import (
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/sqltest"
	"github.com/helmstore/helmstore/internal/testenv/sqlenv"
)

func TestConformanceMySQL(t *testing.T) {
	sqlenv.MySQLServer(t)
	drivertest.Run(t, sqltest.Harness("mysql", sqlenv.MySQL))
}

// MySQL 8 differs from MariaDB (no RETURNING, other collations and
// defaults); it runs where a Docker engine does, or at HELMSTORE_TEST_MYSQL8.
func TestConformanceMySQL8(t *testing.T) {
	sqlenv.MySQL8(t)
	drivertest.Run(t, sqltest.Harness("mysql", sqlenv.MySQL8))
}

// Encryption at rest (package encryption): no plaintext in any row.
func TestEncryptedAtRest(t *testing.T) {
	sqlenv.MySQLServer(t)
	drivertest.RunAtRest(t, sqltest.AtRest("mysql", sqlenv.MySQL))
}

// The whole suite with encryption at rest on.
func TestConformanceMySQLEncrypted(t *testing.T) {
	sqlenv.MySQLServer(t)
	drivertest.Run(t, sqltest.Harness("mysql", sqlenv.MySQL, helm3.WithEncryptionKeys(drivertest.KeyURL(t))))
}
