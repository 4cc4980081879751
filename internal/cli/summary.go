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
	From      string `json:"from"`
	To        string `json:"to"`
	Namespace string `json:"namespace,omitempty"`
	DryRun    bool   `json:"dryRun,omitempty"`
	migrate.Report
	// SourceBytes and DestBytes are what each store holds in the
	// namespaces moved: for Helm's SQL driver its bodies, for its Secrets
	// and ConfigMaps the release data of the objects the move read or
	// wrote, for a helmstore store its heads and parts (Stats), what its
	// deduplication leaves. -1 if unknown.
	SourceBytes int64 `json:"sourceBytes"`
	DestBytes   int64 `json:"destinationBytes"`
	// Deleted is the report of --delete-source.
	Deleted *migrate.Report `json:"deleted,omitempty"`
}

func newSummary(rep migrate.Report, from, to migrate.Store, opts migrate.Options) *summary {
	return &summary{From: from.Name(), To: to.Name(), Namespace: opts.Namespace, DryRun: opts.DryRun, Report: rep, SourceBytes: -1, DestBytes: -1}
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

func (s *summary) print(w io.Writer) {
	if s.DryRun {
		fmt.Fprintf(w, "dry run: %d releases, %d revisions selected in %s; %d to copy to %s, %d there already to compare\n",
			s.Releases, s.Revisions, s.From, count(s.Plan, migrate.Copy), s.To, count(s.Plan, migrate.Check))
		return
	}
	fmt.Fprintf(w, "%d releases, %d revisions: %d copied, %d present, %d replaced, %d removed, every one verified in %s (%d passes, %s)\n",
		s.Releases, s.Revisions, s.Copied, s.Present, s.Replaced, s.Removed, s.To, s.Passes, s.Elapsed.Round(10*time.Millisecond))
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
