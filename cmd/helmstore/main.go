// Command helmstore runs the Helm release lifecycle (install, upgrade,
// rollback, uninstall, test) on any store as helm 3 or helm 4 does, moves
// releases between any two stores (Helm's own Secrets, ConfigMaps and SQL
// drivers and every helmstore backend), checks them, and shows them as helm
// does. It is also the `helm store` plugin.
//
//	go install github.com/helmstore/helmstore/cmd/helmstore@latest
//	helmstore migrate --from secret --to postgres -A
//	HELMSTORE_DRIVER=postgres helmstore upgrade --install web ./web
//
// Run `helmstore help` for its commands.
package main

import (
	"os"

	"github.com/helmstore/helmstore/internal/cli"
)

func main() { os.Exit(cli.Main()) }
