package crsplit_test

import (
	"context"
	"fmt"
	"log"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/cli"

	"github.com/helmstore/helmstore/crsplit"
	"github.com/helmstore/helmstore/helm3"
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
	if err := helm3.Init(cfg, settings.RESTClientGetter(), settings.Namespace(), crsplit.Name, log.Printf); err != nil {
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
// and takes views of it per namespace. Check the error before deferring
// Close: a store that did not open is nil.
func ExampleOpen() {
	ctx := context.Background()
	rc, err := cli.New().RESTClientGetter().ToRESTConfig()
	if err != nil {
		log.Fatal(err)
	}
	cfg := helm3.NewConfig(crsplit.Name, "")
	cfg.RESTClientGetter = rc
	b, err := crsplit.Open(ctx, cfg)
	if err != nil {
		log.Fatal(err) // wraps crsplit.ErrCRDsNotInstalled when the CRDs are missing
	}
	store := helm3.New(b, cfg)
	defer store.Close()
	rel, err := store.Namespace("team-a").Get("sh.helm.release.v1.web.v3")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(rel.Info.Status)
}

// The connection string names a kubeconfig context other than the current
// one; helm3.Open reaches the cluster through the RESTClientGetter given
// (here Helm's flags and KUBECONFIG), or the default kubeconfig without one.
func Example_context() {
	ctx := context.Background()
	store, err := helm3.Open(ctx, crsplit.Name, "staging",
		helm3.WithRESTClientGetter(cli.New().RESTClientGetter()))
	if err != nil {
		log.Fatal(err) // e.g. the kubeconfig has no context "staging"
	}
	defer store.Close()
	stats, err := store.Namespace("team-a").Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(stats.Releases, "revisions,", stats.TotalParts(), "parts,", stats.StoredBytes(), "bytes")
}

// The custom resource definitions InstallCRDs installs (and CRDManifests
// holds as YAML), one per kind, all namespaced in group helmstore.io.
func ExampleCRDs() {
	crds, err := crsplit.CRDs()
	if err != nil {
		log.Fatal(err)
	}
	for _, crd := range crds {
		fmt.Println(crd.Name, crd.Spec.Names.Kind, crd.Spec.Scope)
	}
	// Output:
	// releases.helmstore.io Release Namespaced
	// charts.helmstore.io Chart Namespaced
	// values.helmstore.io Values Namespaced
	// manifests.helmstore.io Manifest Namespaced
	// chunks.helmstore.io Chunk Namespaced
}

// The rights the backend needs, as a Role for one namespace (the
// ClusterRole has the same rules, for every namespace or helm list -A).
func ExampleRBAC() {
	role, _, err := crsplit.RBAC()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(role.Name)
	for _, r := range role.Rules {
		fmt.Println(r.Resources, r.Verbs)
	}
	// Output:
	// helmstore-crsplit
	// [releases] [get list create update delete]
	// [charts values manifests] [get list create patch delete]
	// [chunks] [get create delete]
}
