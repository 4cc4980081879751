package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/helmstore/helmstore/crsplit"
)

// crdsTimeout bounds crds install when --timeout is not given.
const crdsTimeout = 2 * time.Minute

func newCRDsCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "crds",
		Short: "Install or print the custom resource definitions the crsplit store needs",
		Long: `The crsplit store keeps releases in custom resources of the API group helmstore.io, whose
definitions must be in the cluster first, once per cluster (and again after an upgrade of
helmstore that changes them). Installing them needs the right to manage
customresourcedefinitions (cluster-admin, typically); using the store does not.`,
	}
	var timeout time.Duration
	install := &cobra.Command{
		Use:   "install",
		Short: "Create or update the helmstore.io CRDs in the cluster, and wait until they are established",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rc, err := e.getter().ToRESTConfig()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			if err := crsplit.InstallCRDs(ctx, rc); err != nil {
				return err
			}
			fmt.Fprintln(e.out, "helmstore.io custom resource definitions installed and established")
			return nil
		},
	}
	install.Flags().DurationVar(&timeout, "timeout", crdsTimeout, "how long to wait for the API server to establish them")
	print := &cobra.Command{
		Use:   "print",
		Short: "Print the helmstore.io CRDs as YAML, for kubectl apply -f - or a GitOps repository",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := e.out.Write(crsplit.CRDManifests())
			return err
		},
	}
	cmd.AddCommand(install, print)
	for _, c := range []*cobra.Command{cmd, install, print} {
		hideFlags(c, append(storeFlags, lifecycleOnlyFlags...))
	}
	return cmd
}
