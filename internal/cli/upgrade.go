package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helmstore/helmstore/internal/lifecycle"
)

func newUpgradeCmd(e *env) *cobra.Command {
	o := &lifecycle.UpgradeOptions{}
	f := &deployFlags{}
	cmd := &cobra.Command{
		Use:         "upgrade [RELEASE] [CHART]",
		Annotations: map[string]string{lifecycleCommand: "true"},
		Short:       "upgrade a release in the store, as helm upgrade does",
		Long: `upgrade upgrades a release to a chart (with --install, installs it if it has no revision or
its last is uninstalled) and records it in the store --driver names, as helm upgrade does, with
helm's flags and output. --reuse-values, --reset-values and --reset-then-reuse-values choose the
values as in helm.`,
		Args: exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.finish(cmd, e, &o.Deploy); err != nil {
				return err
			}
			o.Name, o.Chart.Ref = args[0], args[1]
			installing := false
			o.Installing = func() {
				installing = true
				if f.output == outputTable {
					fmt.Fprintf(e.out, "Release %q does not exist. Installing it now.\n", o.Name)
				}
			}
			c, err := e.lifecycle(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			stop := e.cancelNotice(cmd.Context(), o.Name)
			r, err := c.Upgrade(cmd.Context(), *o)
			stop()
			var ae *lifecycle.ActionError
			if errors.As(err, &ae) && ae.Op == lifecycle.OpUpgrade {
				return fmt.Errorf("UPGRADE FAILED: %w", err)
			}
			if err != nil {
				return err
			}
			if f.output == outputTable && !installing {
				fmt.Fprintf(e.out, "Release %q has been upgraded. Happy Helming!\n", o.Name)
			}
			return f.printRelease(e, r)
		},
	}
	e.addDeployFlags(cmd, f, &o.Deploy, false)
	fs := cmd.Flags()
	fs.BoolVarP(&o.Install, "install", "i", false, "if a release by this name doesn't already exist, run an install")
	fs.BoolVar(&o.CreateNamespace, "create-namespace", false, "if --install is set, create the release namespace if not present")
	fs.BoolVar(&o.ResetValues, "reset-values", false, "when upgrading, reset the values to the ones built into the chart")
	fs.BoolVar(&o.ReuseValues, "reuse-values", false, "when upgrading, reuse the last release's values and merge in any overrides from the command line via --set and -f. If '--reset-values' is specified, this is ignored")
	fs.BoolVar(&o.ResetThenReuseValues, "reset-then-reuse-values", false, "when upgrading, reset the values to the ones built into the chart, apply the last release's values and merge in any overrides from the command line via --set and -f. If '--reset-values' or '--reuse-values' is specified, this is ignored")
	fs.IntVar(&o.MaxHistory, "history-max", e.settings.MaxHistory, "limit the maximum number of revisions saved per release. Use 0 for no limit")
	fs.BoolVar(&o.CleanupOnFail, "cleanup-on-fail", false, "allow deletion of new resources created in this upgrade when upgrade fails")
	return cmd
}
