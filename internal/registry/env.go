package registry

import (
	"os"

	"github.com/helmstore/helmstore/driver"
)

// ConnectionStringFromEnv returns the connection string for name from the
// environment. For postgres it falls back to Helm's own
// HELM_DRIVER_SQL_CONNECTION_STRING, so switching HELM_DRIVER from sql to
// postgres needs nothing else.
func ConnectionStringFromEnv(name string) string {
	if v := os.Getenv(driver.ConnectionStringEnv(name)); v != "" {
		return v
	}
	if name == "postgres" {
		return os.Getenv("HELM_DRIVER_SQL_CONNECTION_STRING")
	}
	return ""
}
