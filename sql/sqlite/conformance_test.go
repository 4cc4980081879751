package sqlite

import (
	"path/filepath"
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
)

func TestConformanceSQLite(t *testing.T) {
	drivertest.Run(t, sqltest.Harness("sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "helm.db") }))
}

// Without a part cache every read decodes parts for itself alone and the
// engine builds releases on their bytes without copying them (the path of
// a CLI's cold reads): the whole suite again, NoAliasing included.
func TestConformanceSQLiteNoCache(t *testing.T) {
	drivertest.Run(t, sqltest.Harness("sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "helm.db") }, helm3.WithCacheBytes(0)))
}

// Encryption at rest (package encryption): no plaintext in any row.
func TestEncryptedAtRest(t *testing.T) {
	drivertest.RunAtRest(t, sqltest.AtRest("sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "helm.db") }))
}

// The whole suite on stores encrypting at rest.
func TestConformanceSQLiteEncrypted(t *testing.T) {
	drivertest.Run(t, sqltest.Harness("sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "helm.db") }, helm3.WithEncryptionKeys(drivertest.KeyURL(t))))
}
