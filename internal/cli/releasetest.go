package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helmstore/helmstore/internal/lifecycle"
)

func newReleaseTestCmd(e *env) *cobra.Command {
	o := &lifecycle.TestOptions{}
	var (
		logs, hideNotes bool
		output          = outputTable
	)
	cmd := &cobra.Command{
		Use:         "test [RELEASE]",
		Annotations: map[string]string{lifecycleCommand: "true"},
		Short:       "run a release's tests, as helm test does",
		Long: `test runs the tests of a release in the store --driver names, records their runs there and
prints the release's status (and with --logs the test Pods' logs), as helm test does.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) (err error) {
			o.Name = args[0]
			c, err := e.lifecycle(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			run, runErr := c.Test(cmd.Context(), *o)
			if run == nil {
				return runErr
			}
			defer func() {
				if cerr := run.Close(); cerr != nil && err == nil {
					err = cerr
				}
			}()
			p := &releasePrinter{rel: run.Release.Release, native: run.Release.Native(), helm: e.helm, debug: e.settings.Debug, hideNotes: hideNotes || e.helm == 4}
			if err := output.write(e.out, p); err != nil {
				return err
			}
			if logs {
				fmt.Fprintln(e.out)
				if err := run.Logs(e.out); err != nil {
					return errors.Join(runErr, err)
				}
			}
			return runErr
		},
	}
	fs := cmd.Flags()
	fs.DurationVar(&o.Timeout, "timeout", defaultTimeout, "time to wait for any individual Kubernetes operation (like Jobs for hooks)")
	fs.BoolVar(&logs, "logs", false, "dump the logs from test pods (this runs after all tests are complete, but before any cleanup)")
	fs.StringSliceVar(&o.Filters, "filter", []string{}, "specify tests by attribute (currently \"name\") using attribute=value syntax or '!attribute=value' to exclude a test (can specify multiple or separate values with commas: name=test1,name=test2)")
	if e.helm == 3 {
		fs.BoolVar(&hideNotes, "hide-notes", false, "if set, do not show notes in test output. Does not affect presence in chart metadata")
	}
	return cmd
}
