// A program that owns its store: one connection pool, a view per namespace.
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/cli"

	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
)

func main() {
	if err := run(context.Background()); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context) error {
	store, err := helm3.Open(ctx, "postgres", os.Getenv("HELM_DRIVER_POSTGRES_CONNECTION_STRING"))
	if err != nil {
		return err // check before deferring Close: on error store is nil
	}
	defer store.Close()

	settings := cli.New()
	for _, ns := range []string{"team-a", "team-b"} {
		cfg := new(action.Configuration)
		// Helm's client for ns, releases in the store's view of ns. For the
		// storage layer alone: storage.Init(store.Namespace(ns)).
		if err := helm3.Configure(cfg, settings.RESTClientGetter(), ns, store, log.Printf); err != nil {
			return err
		}
		releases, err := cfg.Releases.ListReleases()
		if err != nil {
			return err
		}
		fmt.Println(ns, len(releases), "releases")
	}
	return nil
}
