// Command helm3driver shows how a Helm-based tool picks its store with
// HELM_DRIVER: helm3.Init replaces action.Configuration.Init, so Helm's
// own names keep working and helmstore's are added. It lists the releases
// of one namespace from the storage layer.
//
//	HELM_DRIVER=sqlite go run ./examples/helm3driver -n team-a
//	HELM_DRIVER=postgres HELM_DRIVER_POSTGRES_CONNECTION_STRING=postgres://... go run ./examples/helm3driver
//	HELM_DRIVER=mysql HELM_DRIVER_MYSQL_CONNECTION_STRING='user:pass@tcp(host:3306)/db' go run ./examples/helm3driver
//	HELM_DRIVER=crsplit go run ./examples/helm3driver --kube-context prod   # needs a cluster with crsplit's CRDs
//	HELM_DRIVER=secret go run ./examples/helm3driver   # Helm's own, needs a cluster
//
// It takes Helm's global flags (-n/--namespace, --kube-context,
// --kubeconfig, ...; see -h) and reads:
//
//   - HELM_DRIVER: the store; Helm's names (secret, the default, configmap,
//     memory, sql) or helmstore's (sqlite, postgres, mysql, crsplit; the
//     example imports every backend).
//   - HELM_DRIVER_<NAME>_CONNECTION_STRING for helmstore's names, e.g.
//     HELM_DRIVER_SQLITE_CONNECTION_STRING (a file; empty for
//     DefaultSQLitePath, in HELM_DATA_HOME) or
//     HELM_DRIVER_POSTGRES_CONNECTION_STRING (falling back to Helm's
//     HELM_DRIVER_SQL_CONNECTION_STRING); for crsplit, an optional
//     kubeconfig context.
//   - Helm's environment, as helm does: HELM_NAMESPACE, KUBECONFIG,
//     HELM_KUBECONTEXT and the rest of cli.EnvSettings.
package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/cli"

	_ "github.com/helmstore/helmstore/cosmos"  // registers cosmos
	_ "github.com/helmstore/helmstore/crsplit" // registers crsplit
	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/memstore" // registers memstore
	_ "github.com/helmstore/helmstore/redis"    // registers redis
	_ "github.com/helmstore/helmstore/sql"      // registers postgres, mysql, sqlite
)

func main() {
	if err := run(os.Stdout, os.Stderr, os.Args[1:], os.Getenv("HELM_DRIVER")); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return
		}
		log.Fatal(err)
	}
}

func run(out, usage io.Writer, args []string, helmDriver string) error {
	settings := cli.New()
	flags := pflag.NewFlagSet("helm3driver", pflag.ContinueOnError)
	flags.SetOutput(usage)
	settings.AddFlags(flags) // -n/--namespace, --kube-context, --kubeconfig, ...
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	ns := settings.Namespace()
	cfg := new(action.Configuration)
	if err := helm3.Init(cfg, settings.RESTClientGetter(), ns, helmDriver, func(format string, v ...interface{}) {}); err != nil {
		return err
	}
	// action.NewList(cfg).Run() would first check that the cluster is
	// reachable; the storage layer answers without one.
	rs, err := cfg.Releases.ListReleases()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%d releases in namespace %s of the %s store (driver %s)\n", len(rs), ns, helmDriver, cfg.Releases.Name())
	for _, r := range rs {
		fmt.Fprintf(out, "%s/%s revision %d %s\n", r.Namespace, r.Name, r.Version, r.Info.Status)
	}
	return nil
}
