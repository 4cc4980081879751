package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/helmstore/helmstore/driver"
)

// listFlags are the list command's flags, helm list's.
type listFlags struct {
	allNamespaces, all, short, noHeaders, byDate, reverse bool
	deployed, failed, pending, superseded                 bool
	uninstalled, uninstalling                             bool
	filter, selector, timeFormat                          string
	max, offset                                           int
	output                                                outputFormat
}

func newListCmd(e *env) *cobra.Command {
	f := &listFlags{}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List releases as helm list does, from the store's index alone",
		Long: `list prints the releases of the namespace (every namespace with -A) as helm list prints
them, with helm list's flags: by default the latest revision of each release, if deployed or
failed. It reads the store's summary listing: no chart, values or manifest is read.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runList(cmd.Context(), e, f)
		},
	}
	fs := cmd.Flags()
	fs.BoolVarP(&f.short, "short", "q", false, "output short (quiet) listing format")
	fs.BoolVar(&f.noHeaders, "no-headers", false, "don't print headers when using the default output format")
	fs.StringVar(&f.timeFormat, "time-format", "", `format time using golang time formatter. Example: --time-format "2006-01-02 15:04:05Z0700"`)
	fs.BoolVarP(&f.byDate, "date", "d", false, "sort by release date")
	fs.BoolVarP(&f.reverse, "reverse", "r", false, "reverse the sort order")
	fs.BoolVarP(&f.all, "all", "a", false, "show all releases without any filter applied")
	fs.BoolVar(&f.uninstalled, "uninstalled", false, "show uninstalled releases (if 'helm uninstall --keep-history' was used)")
	fs.BoolVar(&f.superseded, "superseded", false, "show superseded releases")
	fs.BoolVar(&f.uninstalling, "uninstalling", false, "show releases that are currently being uninstalled")
	fs.BoolVar(&f.deployed, "deployed", false, "show deployed releases. If no other is specified, this will be automatically enabled")
	fs.BoolVar(&f.failed, "failed", false, "show failed releases")
	fs.BoolVar(&f.pending, "pending", false, "show pending releases")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "list releases across all namespaces")
	fs.IntVarP(&f.max, "max", "m", 256, "maximum number of releases to fetch")
	fs.IntVar(&f.offset, "offset", 0, "next release index in the list, used to offset from start value")
	fs.StringVarP(&f.filter, "filter", "f", "", "a regular expression (Go's syntax). Any releases that match the expression will be included in the results")
	fs.StringVarP(&f.selector, "selector", "l", "", "Selector (label query) to filter on, supports '=', '==', and '!='.(e.g. -l key1=value1,key2=value2)")
	addOutputFlag(cmd, &f.output)
	return cmd
}

// statuses are the statuses the flags select, as helm list's state mask
// does; onlySuperseded says that --superseded alone was given, which
// helm list answers with every superseded revision, not only the latest.
func (f *listFlags) statuses() (sts []string, onlySuperseded bool) {
	if f.all {
		return []string{"unknown", "deployed", "uninstalled", "superseded", "failed", "uninstalling",
			"pending-install", "pending-upgrade", "pending-rollback"}, false
	}
	add := func(on bool, s ...string) {
		if on {
			sts = append(sts, s...)
		}
	}
	add(f.deployed, "deployed")
	add(f.uninstalled, "uninstalled")
	add(f.uninstalling, "uninstalling")
	add(f.pending, "pending-install", "pending-rollback", "pending-upgrade")
	add(f.failed, "failed")
	add(f.superseded, "superseded")
	if len(sts) == 0 {
		return []string{"deployed", "failed"}, false
	}
	return sts, len(sts) == 1 && f.superseded
}

// query is the summary query of the flags, with the selector it leaves to
// the caller (equalities on custom labels are the store's to select).
func (f *listFlags) query() (driver.SummaryQuery, labels.Selector, error) {
	sts, onlySuperseded := f.statuses()
	q := driver.SummaryQuery{Statuses: sts, Filter: f.filter, AllRevisions: onlySuperseded}
	sel, err := labels.Parse(f.selector)
	if err != nil {
		return q, nil, err
	}
	reqs, _ := sel.Requirements()
	for _, r := range reqs {
		if (r.Operator() == selection.Equals || r.Operator() == selection.DoubleEquals) && !systemLabel(r.Key()) {
			if q.Labels == nil {
				q.Labels = map[string]string{}
			}
			q.Labels[r.Key()] = r.Values().List()[0]
		}
	}
	return q, sel, nil
}

// systemLabel says whether key is one of the labels Helm's Secrets
// driver sets itself, which helm list's selector also matches.
func systemLabel(key string) bool {
	switch key {
	case "name", "owner", "status", "version", "createdAt", "modifiedAt":
		return true
	}
	return false
}

// labelSet is what helm list's selector matches a summary against: its
// custom labels and the system labels Helm's Secrets driver would set
// (but createdAt and modifiedAt, which the summary does not hold).
func labelSet(s driver.Summary) labels.Set {
	set := labels.Set{}
	for k, v := range s.Labels {
		set[k] = v
	}
	set["name"], set["owner"], set["status"], set["version"] = s.Name, "helm", s.Status, strconv.Itoa(s.Revision)
	return set
}

func runList(ctx context.Context, e *env, f *listFlags) error {
	q, sel, err := f.query()
	if err != nil {
		return err
	}
	s, err := e.openHelmstore(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	all, err := summaries(ctx, s.Namespace(e.namespace(f.allNamespaces)), q)
	if err != nil {
		return err
	}
	var rels []driver.Summary
	for _, r := range all {
		if sel.Matches(labelSet(r)) {
			rels = append(rels, r)
		}
	}
	rels = f.page(f.sort(rels))
	if f.short {
		return writeNames(e.out, f.output, rels)
	}
	return f.output.write(e.out, newReleaseList(rels, f.timeFormat, f.noHeaders))
}

// sort orders rels as helm list does: by name, -d by date (oldest first),
// -r reversing either.
func (f *listFlags) sort(rels []driver.Summary) []driver.Summary {
	if f.byDate {
		sort.SliceStable(rels, func(i, j int) bool { return rels[i].Updated.Unix() < rels[j].Updated.Unix() })
	} else {
		sort.SliceStable(rels, func(i, j int) bool { return rels[i].Name < rels[j].Name })
	}
	if f.reverse {
		for i, j := 0, len(rels)-1; i < j; i, j = i+1, j-1 {
			rels[i], rels[j] = rels[j], rels[i]
		}
	}
	return rels
}

// page keeps --max entries from --offset (--max 0: all).
func (f *listFlags) page(rels []driver.Summary) []driver.Summary {
	if f.offset >= len(rels) {
		return nil
	}
	rels = rels[max(f.offset, 0):]
	if f.max > 0 && f.max < len(rels) {
		rels = rels[:f.max]
	}
	return rels
}

// writeNames writes the names of rels (-q): one a line, or a JSON or YAML
// list.
func writeNames(w io.Writer, o outputFormat, rels []driver.Summary) error {
	names := make([]string, 0, len(rels))
	for _, r := range rels {
		names = append(names, r.Name)
	}
	switch o {
	case outputJSON:
		return writeJSON(w, names)
	case outputYAML:
		return writeYAML(w, names)
	}
	for _, n := range names {
		if _, err := fmt.Fprintln(w, n); err != nil {
			return err
		}
	}
	return nil
}

// listedRelease is one line of helm list, and its JSON and YAML form.
type listedRelease struct {
	Name       string `json:"name"`
	Namespace  string `json:"namespace"`
	Revision   string `json:"revision"`
	Updated    string `json:"updated"`
	Status     string `json:"status"`
	Chart      string `json:"chart"`
	AppVersion string `json:"app_version"`
}

// releaseList is what list prints.
type releaseList struct {
	rels      []listedRelease
	noHeaders bool
}

func newReleaseList(rels []driver.Summary, timeFormat string, noHeaders bool) *releaseList {
	l := &releaseList{rels: make([]listedRelease, 0, len(rels)), noHeaders: noHeaders}
	for _, r := range rels {
		updated := "-"
		if !r.Updated.IsZero() {
			if timeFormat != "" {
				updated = r.Updated.Format(timeFormat)
			} else {
				updated = r.Updated.String()
			}
		}
		chart, app := chartColumns(r)
		l.rels = append(l.rels, listedRelease{Name: r.Name, Namespace: r.Namespace, Revision: strconv.Itoa(r.Revision),
			Updated: updated, Status: r.Status, Chart: chart, AppVersion: app})
	}
	return l
}

func (l *releaseList) value() any { return l.rels }

func (l *releaseList) table(w io.Writer) error {
	t := newTable()
	if !l.noHeaders {
		t.AddRow("NAME", "NAMESPACE", "REVISION", "UPDATED", "STATUS", "CHART", "APP VERSION")
	}
	for _, r := range l.rels {
		t.AddRow(r.Name, r.Namespace, r.Revision, r.Updated, r.Status, r.Chart, r.AppVersion)
	}
	return writeTable(w, t)
}
