package cli

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/helmstore/helmstore/internal/lifecycle"
)

func newRollbackCmd(e *env) *cobra.Command {
	o := &lifecycle.RollbackOptions{}
	f := &opFlags{helm: e.helm}
	cmd := &cobra.Command{
		Use:         "rollback <RELEASE> [REVISION]",
		Annotations: map[string]string{lifecycleCommand: "true"},
		Short:       "roll a release in the store back to a revision, as helm rollback does",
		Long: `rollback rolls a release back to a revision (by default the previous one) in the store
--driver names, as helm rollback does, with helm's flags and output.`,
		Args: minimumArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			if len(args) > 1 {
				v, err := strconv.Atoi(args[1])
				if err != nil {
					return fmt.Errorf("could not convert revision to a number: %w", err)
				}
				o.Revision = v
			}
			if err := f.resolve(cmd, e); err != nil {
				return err
			}
			o.Wait, o.Apply, o.DryRun = f.wait, f.apply, f.dryRun
			c, err := e.lifecycle(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			if err := c.Rollback(cmd.Context(), *o); err != nil {
				return err
			}
			fmt.Fprint(e.out, "Rollback was a success! Happy Helming!\n")
			return nil
		},
	}
	fs := cmd.Flags()
	if e.helm == 4 {
		fs.StringVar(&o.Description, "description", "", "add a custom description for the rollback (max 256 characters)")
	}
	f.addDryRun(cmd, "a rollback")
	f.addApply(cmd, "force resource update through delete/recreate if needed")
	f.addWait(cmd, true)
	fs.BoolVar(&o.DisableHooks, "no-hooks", false, "prevent hooks from running during rollback")
	fs.BoolVar(&o.CleanupOnFail, "cleanup-on-fail", false, "allow deletion of new resources created in this rollback when rollback fails")
	fs.IntVar(&o.MaxHistory, "history-max", e.settings.MaxHistory, "limit the maximum number of revisions saved per release. Use 0 for no limit")
	return cmd
}
