package driver

import "time"

// SummaryFields are a revision's summary as every layer stores it (the
// head, the codec's metadata, the records of stores without transactions,
// crsplit's Releases, Cosmos DB's items: one declaration, embedded; the
// JSON names are the stored ones): its chart's name and version and app
// version (from the chart's metadata), when it was last deployed (Helm's
// Info.LastDeployed, RFC 3339 as Helm's JSON writes it, "" if never) and
// its description. HasSummary, set by the engine on every write, says that
// they were recorded: a backend stores it and returns it from List. A head
// stored before its backend kept the summary reads with it false, and the
// engine then reads that release whole to list it.
type SummaryFields struct {
	ChartName    string `json:"chartName,omitempty"`
	ChartVersion string `json:"chartVersion,omitempty"`
	AppVersion   string `json:"appVersion,omitempty"`
	HasSummary   bool   `json:"hasSummary,omitempty"`
	Updated      string `json:"updated,omitempty"`
	Description  string `json:"description,omitempty"`
}

// SummaryQuery selects what a summary listing returns (Summaries of
// helm3.Store and helm4.Store): the releases helm list would show, or every
// revision, without reading any chart, values or manifest. The zero query
// lists the latest revision of every release in the store's namespace (all
// namespaces for an all-namespaces view), whatever its status.
type SummaryQuery struct {
	// AllRevisions lists every revision; by default only the latest
	// (highest) revision of each release, chosen before Statuses and
	// Labels apply, as helm list chooses.
	AllRevisions bool
	// Statuses keeps revisions with one of these statuses ("deployed",
	// "failed", "pending-install", ...; as helm list's --deployed,
	// --failed, ... flags); empty: any.
	Statuses []string
	// Filter is a regular expression (Go's syntax, as helm list --filter)
	// that a release's name must match; "" matches any.
	Filter string
	// NamePrefix keeps releases whose name starts with it: unlike Filter,
	// the store selects it with its index.
	NamePrefix string
	// Labels are custom labels a revision must carry, all with these
	// values (helm list --selector with equalities).
	Labels map[string]string
	// Limit is the most entries of one page (0: all of them).
	Limit int
	// PageToken continues a listing from the page whose NextPageToken it
	// is, with the same query otherwise; "" starts from the beginning.
	PageToken string
}

// SummaryPage is one page of a summary listing, in a stable order: by
// namespace, then release name, then revision.
type SummaryPage struct {
	Summaries []Summary
	// NextPageToken, if not "", gives the next page (SummaryQuery.PageToken).
	NextPageToken string
}

// Summary is what helm list prints and a dashboard shows of one revision,
// read from the store's heads alone. A revision written or changed after the
// page was read may be missing from it or from the next one, as with any
// listing in pages.
type Summary struct {
	// Namespace is the release's own namespace, as helm list prints it;
	// StorageNamespace the one it is stored in, which a view scoped to a
	// namespace gives every release it writes whatever its own (Flux's
	// storage namespace; Helm's Secrets driver does the same).
	Namespace, StorageNamespace string
	Name                        string
	Revision                    int
	Status                      string // as Helm writes it: "deployed", "superseded", ...
	// Chart, ChartVersion and AppVersion are from the chart's metadata
	// (helm list's CHART column is Chart-ChartVersion).
	Chart, ChartVersion, AppVersion string
	// Updated is when the revision was last deployed (Helm's
	// Info.LastDeployed); zero if never.
	Updated     time.Time
	Description string
	// Labels are the revision's custom labels (Helm's Release.Labels
	// without the system labels).
	Labels map[string]string
}
