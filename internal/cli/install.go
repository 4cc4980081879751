package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/helmstore/helmstore/internal/lifecycle"
)

// deployFlags are what the install and upgrade commands share: the
// lifecycle's options and how the result is printed.
type deployFlags struct {
	opFlags
	output    outputFormat
	hideNotes bool
}

// addDeployFlags adds the flags install and upgrade share to cmd, bound to
// d, as the Helm e names spells them; what is "installation" or "upgrade".
func (e *env) addDeployFlags(cmd *cobra.Command, f *deployFlags, d *lifecycle.Deploy, install bool) {
	f.helm, f.install = e.helm, install
	fs := cmd.Flags()
	what := "upgrade"
	if install {
		what = "install"
	}
	f.addDryRun(cmd, "")
	f.addWait(cmd, true)
	fs.BoolVar(&d.HideSecret, "hide-secret", false, "hide Kubernetes Secrets when also using the --dry-run flag")
	fs.BoolVar(&d.DisableHooks, "no-hooks", false, "prevent hooks from running during "+what)
	fs.BoolVar(&d.SkipCRDs, "skip-crds", false, "if set, no CRDs will be installed. By default, CRDs are installed if not already present")
	fs.BoolVar(&d.SubNotes, "render-subchart-notes", false, "if set, render subchart notes along with the parent")
	fs.BoolVar(&d.SkipSchemaValidation, "skip-schema-validation", false, "if set, disables JSON schema validation")
	fs.BoolVar(&d.DisableOpenAPIValidation, "disable-openapi-validation", false, "if set, the "+what+" process will not validate rendered templates against the Kubernetes OpenAPI Schema")
	fs.BoolVar(&d.EnableDNS, "enable-dns", false, "enable DNS lookups when rendering templates")
	fs.BoolVar(&d.TakeOwnership, "take-ownership", false, "if set, "+what+" will ignore the check for helm annotations and take ownership of the existing resources")
	fs.StringVar(&d.Description, "description", "", "add a custom description")
	fs.StringToStringVarP(&d.Labels, "labels", "l", nil, "Labels that would be added to release metadata. Should be divided by comma.")
	fs.BoolVar(&f.hideNotes, "hide-notes", false, "if set, do not show notes in "+what+" output. Does not affect presence in chart metadata")
	force := "force resource updates through a replacement strategy"
	f.addApply(cmd, force)
	rollback := "the installation process deletes the installation on failure"
	if !install {
		rollback = "upgrade process rolls back changes made in case of failed upgrade"
	}
	if e.helm == 4 {
		rollback = "rollback (uninstall) the installation upon failure"
		if !install {
			rollback = "rollback the upgrade to previous success release upon failure"
		}
	}
	f.addRollbackOnFailure(fs, &d.RollbackOnFailure, rollback)
	postRender := "the path to an executable to be used for post rendering. If it exists in $PATH, the binary will be used, otherwise it will try to look for the executable at the given path"
	if e.helm == 4 {
		postRender = "the name of a postrenderer type plugin to be used for post rendering. If it exists, the plugin will be used"
	}
	fs.StringVar(&d.PostRenderer, "post-renderer", "", postRender)
	fs.StringArrayVar(&d.PostRendererArgs, "post-renderer-args", nil, "an argument to the post-renderer (can specify multiple)")
	addValueFlags(fs, &d.Values)
	addChartFlags(fs, &d.Chart)
	addOutputFlag(cmd, &f.output)
}

// finish puts what the flags say into d.
func (f *deployFlags) finish(cmd *cobra.Command, e *env, d *lifecycle.Deploy) error {
	if err := f.resolve(cmd, e); err != nil {
		return err
	}
	d.Wait, d.Apply, d.DryRun = f.wait, f.apply, f.dryRun
	return nil
}

// printRelease prints the release an install or upgrade left as helm does.
func (f *deployFlags) printRelease(e *env, r *lifecycle.Release) error {
	if r == nil {
		return nil
	}
	return f.output.write(e.out, &releasePrinter{rel: r.Release, native: r.Native(), helm: e.helm,
		debug: e.settings.Debug, hideNotes: f.hideNotes})
}

// cancelNotice prints helm's notice that the release's operation is
// cancelled when ctx ends (SIGINT, SIGTERM: Main's context) before the
// returned stop is called; Helm's action then stops and fails. stop waits
// for the watcher, so that nothing is printed after it (Main cancels ctx
// on its way out).
func (e *env) cancelNotice(ctx context.Context, name string) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-done:
		case <-ctx.Done():
			fmt.Fprintf(e.out, "Release %s has been cancelled.\n", name)
		}
	}()
	return func() {
		close(done)
		<-exited
	}
}

// lifecycle opens the store --driver names for the lifecycle of the Helm
// --helm names.
func (e *env) lifecycle(ctx context.Context) (*lifecycle.Client, error) {
	return lifecycle.New(ctx, lifecycle.Config{Helm: e.helm, Settings: e.settings, Driver: e.driver, Connection: e.conn, Out: e.out, Log: e.errOut})
}

func newInstallCmd(e *env) *cobra.Command {
	o := &lifecycle.InstallOptions{}
	f := &deployFlags{}
	cmd := &cobra.Command{
		Use:         "install [NAME] [CHART]",
		Annotations: map[string]string{lifecycleCommand: "true"},
		Short:       "install a chart into the store, as helm install does",
		Long: `install installs a chart as a new release and records it in the store --driver names, as
helm install does, with helm's flags and output. The chart is a chart reference (repo/name), a
packaged chart, a chart directory, a URL, an oci:// reference, or a name with --repo.`,
		Args: minimumArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.finish(cmd, e, &o.Deploy); err != nil {
				return err
			}
			switch len(args) {
			case 1:
				o.Chart.Ref = args[0]
			case 2:
				o.Name, o.Chart.Ref = args[0], args[1]
			default:
				return fmt.Errorf("INSTALLATION FAILED: expected at most two arguments, unexpected arguments: %v", strings.Join(args[2:], ", "))
			}
			c, err := e.lifecycle(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			stop := e.cancelNotice(cmd.Context(), args[0])
			r, err := c.Install(cmd.Context(), *o)
			stop()
			if err != nil {
				return fmt.Errorf("INSTALLATION FAILED: %w", err)
			}
			return f.printRelease(e, r)
		},
	}
	e.addDeployFlags(cmd, f, &o.Deploy, true)
	fs := cmd.Flags()
	fs.BoolVar(&o.CreateNamespace, "create-namespace", false, "create the release namespace if not present")
	fs.BoolVar(&o.Replace, "replace", false, "re-use the given name, only if that name is a deleted release which remains in the history. This is unsafe in production")
	fs.BoolVarP(&o.GenerateName, "generate-name", "g", false, "generate the name (and omit the NAME parameter)")
	fs.StringVar(&o.NameTemplate, "name-template", "", "specify template used to name the release")
	return cmd
}

// minimumArgs is helm's check of a command's arguments: at least n.
func minimumArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return fmt.Errorf("%q requires at least %d %s\n\nUsage:  %s", cmd.CommandPath(), n, plural("argument", n), cmd.UseLine())
		}
		return nil
	}
}

// exactArgs is helm's check of a command's arguments: exactly n.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%q requires %d %s\n\nUsage:  %s", cmd.CommandPath(), n, plural("argument", n), cmd.UseLine())
		}
		return nil
	}
}

// plural is word for n of it.
func plural(word string, n int) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
