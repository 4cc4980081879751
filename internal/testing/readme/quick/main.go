// A Helm 3 tool whose releases go wherever HELM_DRIVER says.
package main

import (
	"log"
	"os"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/cli"

	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
)

func main() {
	settings, cfg := cli.New(), new(action.Configuration)
	// A drop-in for cfg.Init; cfg then serves action.NewInstall(cfg), action.NewUpgrade(cfg), ...
	err := helm3.Init(cfg, settings.RESTClientGetter(), settings.Namespace(), os.Getenv("HELM_DRIVER"), log.Printf)
	if err != nil {
		log.Fatal(err)
	}
}
