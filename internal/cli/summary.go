package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/migrate"
)

// summary is what migrate prints at the end (-o json: as JSON).
type summary struct {
	// From and To name the stores as --from and --to did (secret, sql,
	// postgres, ...).
	From string `json:"from"`
	To   string `json:"to"`
	// Namespace is the namespace moved; "" (AllNamespaces) every one.
	Namespace     string `json:"namespace,omitempty"`
	AllNamespaces bool   `json:"allNamespaces,omitempty"`
	Release       string `json:"release,omitempty"`
	DryRun        bool   `json:"dryRun,omitempty"`
	report
	// SourceBytes and DestBytes are what each store holds in the
	// namespaces moved: for Helm's SQL driver its bodies, for its Secrets
	// and ConfigMaps the release data of the objects the move read or
	// wrote, for a helmstore store its heads and parts (Stats), what its
	// deduplication leaves. -1 if unknown.
	SourceBytes int64 `json:"sourceBytes"`
	DestBytes   int64 `json:"destinationBytes"`
	// Deleted is the report of --delete-source.
	Deleted *report `json:"deleted,omitempty"`
	// Error is the error the move stopped with, redacted as the command
	// prints it; its counts are what was done before.
	Error string `json:"error,omitempty"`
}

// report is a migrate.Report as the command prints it: the elapsed time
// in seconds (elapsedSeconds), not in nanoseconds (the Report's own
// "elapsed", shadowed here and left out).
type report struct {
	migrate.Report
	Elapsed *struct{} `json:"elapsed,omitempty"`
	Seconds float64   `json:"elapsedSeconds"`
}

func reportOf(r migrate.Report) report { return report{Report: r, Seconds: r.Elapsed.Seconds()} }

func newSummary(rep migrate.Report, from, to string, opts migrate.Options) *summary {
	return &summary{From: from, To: to, Namespace: opts.Namespace, AllNamespaces: opts.Namespace == "", Release: opts.Release,
		DryRun: opts.DryRun, report: reportOf(rep), SourceBytes: -1, DestBytes: -1}
}

// statser is a store that reports what it holds per namespace (helmstore's).
type statser interface {
	Stats(ctx context.Context, ns string) (driver.Stats, error)
}

// storedByter is a store that says how many bytes it holds per namespace
// (every store migrate.Open opens).
type storedByter interface {
	StoredBytes(ctx context.Context, ns string) (int64, error)
}

// measure fills the bytes of both stores.
func (s *summary) measure(ctx context.Context, from, to migrate.Store) {
	s.SourceBytes = storedBytes(ctx, from, s.Namespace)
	s.DestBytes = storedBytes(ctx, to, s.Namespace)
}

func storedBytes(ctx context.Context, st migrate.Store, ns string) int64 {
	if sb, ok := st.(storedByter); ok {
		if n, err := sb.StoredBytes(ctx, ns); err == nil {
			return n
		}
	}
	return -1
}

// where names what the move selected: a release, a namespace or every
// namespace.
func (s *summary) where() string {
	w := fmt.Sprintf("namespace %q", s.Namespace)
	if s.AllNamespaces {
		w = "every namespace"
	}
	if s.Release != "" {
		return fmt.Sprintf("release %q in %s", s.Release, w)
	}
	return w
}

func (s *summary) print(w io.Writer) {
	if s.DryRun {
		fmt.Fprintf(w, "dry run: %d releases, %d revisions selected in %s of %s; %d to copy to %s, %d there already to compare\n",
			s.Releases, s.Revisions, s.where(), s.From, count(s.Plan, migrate.Copy), s.To, count(s.Plan, migrate.Check))
		return
	}
	if s.Error != "" && s.Revisions == 0 {
		return // nothing was selected: the error says it all
	}
	if s.Error != "" {
		fmt.Fprintf(w, "stopped on an error (below) in %s of %s: %d releases, %d revisions selected; %d copied, %d present, %d replaced, %d removed and verified in %s before it (%s)\n",
			s.where(), s.From, s.Releases, s.Revisions, s.Copied, s.Present, s.Replaced, s.Removed, s.To, s.Report.Elapsed.Round(10*time.Millisecond))
		return
	}
	if s.Releases == 0 {
		hint := ""
		if !s.AllNamespaces {
			hint = " (-A moves every namespace)"
		}
		fmt.Fprintf(w, "no releases in %s of %s: nothing to move%s\n", s.where(), s.From, hint)
		return
	}
	fmt.Fprintf(w, "%d releases, %d revisions in %s: %d copied, %d present, %d replaced, %d removed, every one verified in %s (%d passes, %s)\n",
		s.Releases, s.Revisions, s.where(), s.Copied, s.Present, s.Replaced, s.Removed, s.To, s.Passes, s.Report.Elapsed.Round(10*time.Millisecond))
	fmt.Fprintf(w, "stored: %s in %s, %s in %s\n", maybeBytes(s.SourceBytes), s.From, maybeBytes(s.DestBytes), s.To)
	if s.Deleted != nil {
		fmt.Fprintf(w, "deleted from %s: %d revisions\n", s.From, s.Deleted.Removed)
	}
}

func count(evs []migrate.Event, a migrate.Action) int {
	n := 0
	for _, e := range evs {
		if e.Action == a {
			n++
		}
	}
	return n
}

func maybeBytes(n int64) string {
	if n < 0 {
		return "?"
	}
	return bytesText(n)
}
