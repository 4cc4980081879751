package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	rspb "helm.sh/helm/v4/pkg/release/v1"
)

// newGetCmd returns get and its subcommands, helm get's: values,
// manifest, notes, hooks and all, each of one revision of a release.
func newGetCmd(e *env) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "get",
		Short: "Print a release's values, manifest, notes or hooks as helm get does",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(
		newGetValuesCmd(e),
		newGetPartCmd(e, "manifest", "download the manifest for a named release", func(w io.Writer, r *rspb.Release) error {
			_, err := fmt.Fprintln(w, r.Manifest)
			return err
		}),
		newGetPartCmd(e, "notes", "download the notes for a named release", func(w io.Writer, r *rspb.Release) error {
			if r.Info.Notes == "" {
				return nil
			}
			_, err := fmt.Fprintf(w, "NOTES:\n%s\n", r.Info.Notes)
			return err
		}),
		newGetPartCmd(e, "hooks", "download all hooks for a named release", func(w io.Writer, r *rspb.Release) error {
			writeHooks(w, r.Hooks)
			return nil
		}),
		newGetPartCmd(e, "all", "download all information for a named release", func(w io.Writer, r *rspb.Release) error {
			return (&releasePrinter{rel: r, helm: e.helm, showMetadata: true, debug: true}).table(w)
		}),
	)
	return cmd
}

// newGetPartCmd returns the get subcommand use, printing the revision it
// reads with print.
func newGetPartCmd(e *env, use, short string, print func(io.Writer, *rspb.Release) error) *cobra.Command {
	var revision int
	cmd := &cobra.Command{
		Use:   use + " RELEASE_NAME",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rel, err := e.readRelease(cmd.Context(), args[0], revision)
			if err != nil {
				return err
			}
			return print(e.out, rel)
		},
	}
	cmd.Flags().IntVar(&revision, "revision", 0, "get the named release with revision")
	return cmd
}

// readRelease reads revision rev (0: the latest) of release name in the
// namespace from the store --driver names.
func (e *env) readRelease(ctx context.Context, name string, rev int) (*rspb.Release, error) {
	s, err := e.openHelmstore(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return readRelease(ctx, s.Namespace(e.namespace(false)), name, rev)
}

func newGetValuesCmd(e *env) *cobra.Command {
	var (
		revision int
		all      bool
		output   outputFormat
	)
	cmd := &cobra.Command{
		Use:   "values RELEASE_NAME",
		Short: "download the values file for a named release",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			rel, err := e.readRelease(cmd.Context(), args[0], revision)
			if err != nil {
				return err
			}
			v := values{vals: rel.Config}
			if all {
				computed, err := computedValues(e.helm, rel.Chart, rel.Config)
				if err != nil {
					return err
				}
				v = values{vals: computed, all: true}
			}
			return output.write(e.out, v)
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&revision, "revision", 0, "get the named release with revision")
	fs.BoolVarP(&all, "all", "a", false, "dump all (computed) values")
	addOutputFlag(cmd, &output)
	return cmd
}

// values is what get values prints: the values given, or all computed
// with the chart's.
type values struct {
	vals map[string]any
	all  bool
}

func (v values) value() any { return v.vals }

func (v values) table(w io.Writer) error {
	title := "USER-SUPPLIED VALUES:"
	if v.all {
		title = "COMPUTED VALUES:"
	}
	if _, err := fmt.Fprintln(w, title); err != nil {
		return err
	}
	return writeYAML(w, v.vals)
}
