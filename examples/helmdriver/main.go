// Command helmdriver shows how a Helm-based tool picks its store with
// HELM_DRIVER: driver.Init replaces action.Configuration.Init, so Helm's
// own names keep working and helmstore's are added.
//
//	HELM_DRIVER=sqlite go run ./examples/helmdriver
//	HELM_DRIVER=postgres HELM_DRIVER_POSTGRES_CONNECTION_STRING=postgres://... go run ./examples/helmdriver
//	HELM_DRIVER=secret go run ./examples/helmdriver   # Helm's own, needs a cluster
package main

import (
	"fmt"
	"io"
	"log"
	"os"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/cli"

	"github.com/helmstore/helmstore/driver"
	_ "github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
)

func main() {
	if err := run(os.Stdout, os.Getenv("HELM_DRIVER")); err != nil {
		log.Fatal(err)
	}
}

func run(out io.Writer, helmDriver string) error {
	settings := cli.New()
	cfg := new(action.Configuration)
	if err := driver.Init(cfg, settings.RESTClientGetter(), settings.Namespace(), helmDriver, func(format string, v ...interface{}) {}); err != nil {
		return err
	}
	// action.NewList(cfg).Run() would first check that the cluster is
	// reachable; the storage layer answers without one.
	rs, err := cfg.Releases.ListReleases()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d releases in the %s store (driver %s)\n", len(rs), helmDriver, cfg.Releases.Name())
	for _, r := range rs {
		fmt.Fprintf(out, "%s/%s revision %d %s\n", r.Namespace, r.Name, r.Version, r.Info.Status)
	}
	return nil
}
