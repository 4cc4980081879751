// The same tool on Helm 4: import helm4, and Init takes no log function.
package main

import (
	"fmt"
	"log"
	"os"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/cli"
	release "helm.sh/helm/v4/pkg/release/v1"

	"github.com/helmstore/helmstore/helm4"
	_ "github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
)

func main() {
	settings := cli.New()
	cfg := action.NewConfiguration() // its slog handler is the store's logger
	err := helm4.Init(cfg, settings.RESTClientGetter(), settings.Namespace(), os.Getenv("HELM_DRIVER"))
	if err != nil {
		log.Fatal(err)
	}
	releases, err := cfg.Releases.ListReleases()
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range releases {
		r := r.(*release.Release)
		fmt.Println(r.Namespace, r.Name, r.Version, r.Info.Status)
	}
}
