// Command helmstore moves Helm releases between any two stores (Helm's own
// Secrets, ConfigMaps and SQL drivers and every helmstore backend), checks
// them, and shows them as helm does. It is also the `helm store` plugin.
//
//	go install github.com/helmstore/helmstore/cmd/helmstore@latest
//	helmstore migrate --from secret --to postgres -A
//
// Run `helmstore help` for its commands.
package main

import (
	"os"

	"github.com/helmstore/helmstore/internal/cli"
)

func main() { os.Exit(cli.Main()) }
