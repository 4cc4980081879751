// A Helm-based tool that keeps its releases wherever HELM_DRIVER says.
package main

import (
	"fmt"
	"log"
	"os"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/cli"

	_ "github.com/helmstore/helmstore/crsplit" // registers crsplit
	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
)

func main() {
	settings := cli.New() // Helm's kubeconfig, context and namespace flags
	cfg := new(action.Configuration)
	// A drop-in for cfg.Init(getter, namespace, helmDriver, log):
	err := helm3.Init(cfg, settings.RESTClientGetter(), settings.Namespace(), os.Getenv("HELM_DRIVER"), log.Printf)
	if err != nil {
		log.Fatal(err)
	}
	// cfg now serves action.NewInstall(cfg), action.NewUpgrade(cfg), ...
	releases, err := cfg.Releases.ListReleases()
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range releases {
		fmt.Println(r.Namespace, r.Name, r.Version, r.Info.Status)
	}
}
