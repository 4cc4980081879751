package cli

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"
)

// historyFlags are the history command's flags, helm history's.
type historyFlags struct {
	max    int
	output outputFormat
}

func newHistoryCmd(e *env) *cobra.Command {
	f := &historyFlags{}
	cmd := &cobra.Command{
		Use:     "history RELEASE_NAME",
		Aliases: []string{"hist"},
		Short:   "Print a release's revisions as helm history does, from the store's index alone",
		Long: `history prints the newest revisions of a release (--max, 256 by default), oldest first, as
helm history prints them. It reads the store's summary listing: no chart, values or manifest
is read.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistory(cmd.Context(), e, f, args[0])
		},
	}
	cmd.Flags().IntVar(&f.max, "max", 256, "maximum number of revision to include in history")
	addOutputFlag(cmd, &f.output)
	return cmd
}

func runHistory(ctx context.Context, e *env, f *historyFlags, name string) error {
	s, err := e.openHelmstore(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	revs, err := revisions(ctx, s.Namespace(e.namespace(false)), name)
	if err != nil {
		return err
	}
	revs = revs[len(revs)-min(max(f.max, 0), len(revs)):]
	h := make(history, 0, len(revs))
	for _, r := range revs {
		chart, app := chartColumns(r)
		h = append(h, historyEntry{Revision: r.Revision, Updated: helm3Time{r.Updated}, Status: r.Status,
			Chart: chart, AppVersion: app, Description: r.Description})
	}
	return f.output.write(e.out, h)
}

// historyEntry is one line of helm history, and its JSON and YAML form.
type historyEntry struct {
	Revision    int       `json:"revision"`
	Updated     helm3Time `json:"updated"`
	Status      string    `json:"status"`
	Chart       string    `json:"chart"`
	AppVersion  string    `json:"app_version"`
	Description string    `json:"description"`
}

// history is what the history command prints.
type history []historyEntry

func (h history) value() any { return h }

func (h history) table(w io.Writer) error {
	t := newTable("REVISION", "UPDATED", "STATUS", "CHART", "APP VERSION", "DESCRIPTION")
	for _, r := range h {
		t.AddRow(r.Revision, r.Updated.Format(time.ANSIC), r.Status, r.Chart, r.AppVersion, r.Description)
	}
	return writeTable(w, t)
}
