// Command helm4driver is examples/helm3driver for a tool built on Helm 4:
// helm4.Init replaces Helm 4's action.Configuration.Init, so Helm's own
// HELM_DRIVER names keep working and helmstore's are added. It lists the
// releases of one namespace from the storage layer, and links no Helm 3
// package.
//
//	HELM_DRIVER=sqlite go run ./examples/helm4driver -n team-a
//	HELM_DRIVER=postgres HELM_DRIVER_POSTGRES_CONNECTION_STRING=postgres://... go run ./examples/helm4driver
//	HELM_DRIVER=secret go run ./examples/helm4driver   # Helm 4's own, needs a cluster
//
// It takes Helm's global flags (-n/--namespace, --kube-context,
// --kubeconfig, ...; see -h) and reads HELM_DRIVER,
// HELM_DRIVER_<NAME>_CONNECTION_STRING and Helm's environment, as
// examples/helm3driver does. Its logs go to stderr through log/slog, at the
// level -debug sets.
package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"

	"github.com/spf13/pflag"
	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/cli"
	rspb "helm.sh/helm/v4/pkg/release/v1"

	_ "github.com/helmstore/helmstore/cosmos"  // registers cosmos
	_ "github.com/helmstore/helmstore/crsplit" // registers crsplit
	"github.com/helmstore/helmstore/helm4"
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
	flags := pflag.NewFlagSet("helm4driver", pflag.ContinueOnError)
	flags.SetOutput(usage)
	settings.AddFlags(flags) // -n/--namespace, --kube-context, --kubeconfig, --debug, ...
	if err := flags.Parse(args); err != nil {
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", flags.Arg(0))
	}
	level := slog.LevelInfo
	if settings.Debug {
		level = slog.LevelDebug
	}
	cfg := action.NewConfiguration(action.ConfigurationSetLogger(slog.NewTextHandler(usage, &slog.HandlerOptions{Level: level})))
	ns := settings.Namespace()
	if err := helm4.Init(cfg, settings.RESTClientGetter(), ns, helmDriver); err != nil {
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
		if r, ok := r.(*rspb.Release); ok {
			fmt.Fprintf(out, "%s/%s revision %d %s\n", r.Namespace, r.Name, r.Version, r.Info.Status)
		}
	}
	return nil
}
