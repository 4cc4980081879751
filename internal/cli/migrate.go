package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/helmstore/helmstore/migrate"
)

// migrateFlags are the migrate command's flags.
type migrateFlags struct {
	from, to, fromConn, toConn string
	allNamespaces              bool
	opts                       migrate.Options
	deleteSource               bool
	output                     string
}

func newMigrateCmd(e *env) *cobra.Command {
	f := &migrateFlags{}
	cmd := &cobra.Command{
		Use:   "migrate [RELEASE] --from STORE --to STORE",
		Short: "Copy releases from one store to another, verifying every revision",
		Long: `migrate copies every revision of the selected releases (RELEASE, the namespace, or every
namespace with -A) from one store to another, each to its own namespace, oldest first, and reads
each back from the destination and compares it with the source before counting it done.

It resumes: a rerun skips revisions already present and equal, and stops on one present and
different unless --overwrite. The source is not written, unless --delete-source, which deletes
from it, after the move, only the revisions the destination holds equal. A tool may go on
writing to the source: migrate lists it again after each pass and moves what changed, until a
pass finds nothing; a release with a Helm operation in flight (pending) is refused unless
--allow-pending. Killed at any point, a rerun completes the move.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				f.opts.Release = args[0]
			}
			for _, name := range storeFlags {
				if cmd.Flags().Changed(name) {
					return fmt.Errorf("migrate takes its stores from --from and --to (and --from-connection, --to-connection), not --%s", name)
				}
			}
			return runMigrate(cmd, e, f)
		},
	}
	hideFlags(cmd, append(storeFlags, lifecycleOnlyFlags...))
	fs := cmd.Flags()
	fs.StringVar(&f.from, "from", "", "the store to copy from, as HELM_DRIVER names it (secret, configmap, sql, postgres, ...)")
	fs.StringVar(&f.to, "to", "", "the store to copy to, as HELM_DRIVER names it")
	fs.StringVar(&f.fromConn, "from-connection", "", "the source's connection string (default: from the environment)")
	fs.StringVar(&f.toConn, "to-connection", "", "the destination's connection string (default: from the environment)")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "move the releases of every namespace")
	fs.IntVar(&f.opts.MaxRevisions, "max-revisions", 0, "move only the newest N revisions of each release (0: all)")
	fs.BoolVar(&f.opts.DryRun, "dry-run", false, "print what would be done, and do nothing")
	fs.BoolVar(&f.opts.Overwrite, "overwrite", false, "replace revisions present in the destination and different")
	fs.BoolVar(&f.opts.AllowPending, "allow-pending", false, "move releases with a Helm operation in flight too")
	fs.IntVar(&f.opts.Parallel, "parallel", 4, "releases moved at once")
	fs.BoolVar(&f.deleteSource, "delete-source", false, "after the move, delete from the source the revisions the destination holds equal")
	fs.StringVarP(&f.output, "output", "o", "table", "output: table (progress, then a summary) or json (the report, for scripts)")
	cmd.MarkFlagRequired("from")
	cmd.MarkFlagRequired("to")
	return cmd
}

// storeFlags are the global flags that name the store of the other
// commands; migrate refuses them (it has --from and --to).
var storeFlags = []string{"driver", "connection"}

func runMigrate(cmd *cobra.Command, e *env, f *migrateFlags) error {
	ctx := cmd.Context()
	if f.output != "table" && f.output != "json" {
		return fmt.Errorf("unknown output %q: table or json", f.output)
	}
	if f.from == f.to && f.fromConn == f.toConn {
		return fmt.Errorf("--from and --to name the same store (%s)", f.from)
	}
	f.opts.Namespace = e.namespace(f.allNamespaces)
	from, err := e.open(ctx, f.from, f.fromConn)
	if err != nil {
		return fmt.Errorf("opening the source: %w", err)
	}
	defer from.Close()
	to, err := e.open(ctx, f.to, f.toConn)
	if err != nil {
		return fmt.Errorf("opening the destination: %w", err)
	}
	defer to.Close()

	p := newProgress(e, f.output == "json")
	f.opts.Progress, f.opts.Selected = p.event, p.selected
	rep, err := migrate.Run(ctx, from, to, f.opts)
	p.done()
	sum := newSummary(rep, f.from, f.to, f.opts)
	if !f.opts.DryRun {
		sum.measure(ctx, from, to)
	}
	if err == nil && f.deleteSource {
		p = newProgress(e, f.output == "json")
		opts := f.opts
		opts.Progress, opts.Selected = p.event, p.selected
		del, derr := migrate.DeleteSource(ctx, from, to, opts)
		p.done()
		d := reportOf(del)
		sum.Deleted = &d
		err = derr
	}
	if err != nil {
		sum.Error = errorText(cmd, err)
	}
	if f.output == "json" {
		enc := json.NewEncoder(e.out)
		enc.SetIndent("", "  ")
		if jerr := enc.Encode(sum); jerr != nil {
			return jerr
		}
	} else {
		sum.print(e.out)
	}
	return err
}
