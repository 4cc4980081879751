package driver

import (
	"os"
	"strings"
)

// ConnectionStringEnv returns the environment variable that holds the
// connection string for a driver name, in Helm's style:
// HELM_DRIVER_<NAME>_CONNECTION_STRING (Helm itself uses
// HELM_DRIVER_SQL_CONNECTION_STRING for its sql driver).
func ConnectionStringEnv(name string) string {
	return "HELM_DRIVER_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_CONNECTION_STRING"
}

// ConnectionStringFromEnv returns the connection string for name from the
// environment. For postgres it falls back to Helm's own
// HELM_DRIVER_SQL_CONNECTION_STRING, so switching HELM_DRIVER from sql to
// postgres needs nothing else.
func ConnectionStringFromEnv(name string) string {
	if v := os.Getenv(ConnectionStringEnv(name)); v != "" {
		return v
	}
	if name == "postgres" {
		return os.Getenv("HELM_DRIVER_SQL_CONNECTION_STRING")
	}
	return ""
}
