package driver

import "strings"

// ConnectionStringEnv returns the environment variable that holds the
// connection string for a driver name, in Helm's style:
// HELM_DRIVER_<NAME>_CONNECTION_STRING (Helm itself uses
// HELM_DRIVER_SQL_CONNECTION_STRING for its sql driver).
func ConnectionStringEnv(name string) string {
	return "HELM_DRIVER_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_")) + "_CONNECTION_STRING"
}
