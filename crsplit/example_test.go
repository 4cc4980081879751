package crsplit_test

import (
	"context"
	"fmt"
	"log"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/cli"

	"github.com/helmstore/helmstore/crsplit"
	"github.com/helmstore/helmstore/driver"
)

// A Helm-based tool stores its releases as helmstore.io custom resources:
// install the CRDs once per cluster, then select the driver as
// HELM_DRIVER=crsplit would.
func Example() {
	ctx := context.Background()
	settings := cli.New() // Helm's kubeconfig, context and namespace flags

	// Once per cluster, by someone allowed to manage CRDs.
	rc, err := settings.RESTClientGetter().ToRESTConfig()
	if err != nil {
		log.Fatal(err)
	}
	if err := crsplit.InstallCRDs(ctx, rc); err != nil {
		log.Fatal(err)
	}

	cfg := new(action.Configuration)
	if err := driver.Init(cfg, settings.RESTClientGetter(), settings.Namespace(), crsplit.DriverName, log.Printf); err != nil {
		log.Fatal(err)
	}
	releases, err := action.NewList(cfg).Run()
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range releases {
		fmt.Println(r.Name, r.Version, r.Info.Status)
	}
}

// A program with a client configuration of its own opens a store directly
// and takes views of it per namespace.
func ExampleOpen() {
	ctx := context.Background()
	rc, err := cli.New().RESTClientGetter().ToRESTConfig()
	if err != nil {
		log.Fatal(err)
	}
	store, err := crsplit.Open(ctx, rc)
	if err != nil {
		log.Fatal(err) // wraps crsplit.ErrCRDsNotInstalled when the CRDs are missing
	}
	defer store.Close()
	rel, err := store.Namespace("team-a").Get("sh.helm.release.v1.web.v3")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rel.Info.Status)
}
