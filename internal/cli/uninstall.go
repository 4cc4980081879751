package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helmstore/helmstore/internal/lifecycle"
)

func newUninstallCmd(e *env) *cobra.Command {
	o := &lifecycle.UninstallOptions{}
	f := &opFlags{helm: e.helm}
	cmd := &cobra.Command{
		Use:         "uninstall RELEASE_NAME [...]",
		Aliases:     []string{"del", "delete", "un"},
		SuggestFor:  []string{"remove", "rm"},
		Annotations: map[string]string{lifecycleCommand: "true"},
		Short:       "uninstall a release from the store, as helm uninstall does",
		Long: `uninstall removes the resources of a release's last revision and its history from the store
--driver names (with --keep-history, marks it uninstalled and keeps its history), as helm
uninstall does, with helm's flags and output.`,
		Args: minimumArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.resolve(cmd, e); err != nil {
				return err
			}
			o.Wait = f.wait
			c, err := e.lifecycle(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			for _, name := range args {
				o.Name = name
				info, err := c.Uninstall(cmd.Context(), *o)
				if err != nil {
					return err
				}
				if info != "" {
					fmt.Fprintln(e.out, info)
				}
				fmt.Fprintf(e.out, "release \"%s\" uninstalled\n", name)
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.DryRun, "dry-run", false, "simulate a uninstall")
	fs.BoolVar(&o.DisableHooks, "no-hooks", false, "prevent hooks from running during uninstallation")
	fs.BoolVar(&o.IgnoreNotFound, "ignore-not-found", false, `Treat "release not found" as a successful uninstall`)
	fs.BoolVar(&o.KeepHistory, "keep-history", false, "remove all associated resources and mark the release as deleted, but retain the release history")
	fs.StringVar(&o.Cascade, "cascade", "background", "Must be \"background\", \"orphan\", or \"foreground\". Selects the deletion cascading strategy for the dependents. Defaults to background.")
	fs.StringVar(&o.Description, "description", "", "add a custom description")
	f.addWait(cmd, false)
	if e.helm == 3 {
		fs.Lookup("wait").Usage = "if set, will wait until all the resources are deleted before returning. It will wait for as long as --timeout"
	}
	return cmd
}
