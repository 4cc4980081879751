package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/registry"
	"github.com/helmstore/helmstore/migrate"
)

// verifier is a store that reads its revisions whole, damaged ones
// included (helmstore's).
type verifier interface {
	Verify(ctx context.Context, ns string, bad func(*driver.ReleaseError)) (int, error)
}

// collector is a store that can collect garbage, or say what it would
// collect (helmstore's).
type collector interface {
	Collect(ctx context.Context, ns string) error
	Garbage(ctx context.Context, ns string) (driver.Garbage, error)
}

func newVerifyCmd(e *env) *cobra.Command {
	var all bool
	cmd := &cobra.Command{
		Use:   "verify",
		Short: "Read every revision whole and name each one that cannot be read",
		Long: `verify reads every revision of the namespace (every namespace with -A) as Helm would read it:
on a helmstore store its head, every part with its digest and seal, and its decoding. It names
each revision that cannot be read and exits 1 if there is any.`,
		Args: cobra.NoArgs,
		RunE: e.onStore(func(ctx context.Context, s migrate.Store) error {
			var bad []string
			report := func(ns, key string, err error) {
				bad = append(bad, fmt.Sprintf("%s/%s: %v", ns, key, err))
			}
			var (
				n   int
				err error
			)
			if v, ok := s.(verifier); ok {
				n, err = v.Verify(ctx, e.namespace(all), func(re *driver.ReleaseError) { report(re.Namespace, re.Key, re.Err) })
			} else {
				n, err = verifyEach(ctx, s, e.namespace(all), report)
			}
			if err != nil {
				return err
			}
			sort.Strings(bad)
			for _, b := range bad {
				fmt.Fprintln(e.out, registry.Redact(b))
			}
			fmt.Fprintf(e.out, "%d revisions read, %d unreadable\n", n, len(bad))
			if len(bad) > 0 {
				return fmt.Errorf("%d revisions cannot be read", len(bad))
			}
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "every namespace")
	return cmd
}

// verifyEach reads each listed revision of a store of Helm's.
func verifyEach(ctx context.Context, s migrate.Store, ns string, bad func(ns, key string, err error)) (int, error) {
	revs, err := s.Revisions(ctx, ns, "")
	if err != nil {
		return 0, err
	}
	for _, r := range revs {
		if _, err := s.Get(ctx, r); err != nil {
			if errors.Is(err, helmdriver.ErrReleaseNotFound) {
				continue // deleted since listed
			}
			bad(r.Namespace, r.Key(), err)
		}
	}
	return len(revs), nil
}

// nsStats is one namespace's line of helmstore stats.
type nsStats struct {
	Namespace   string         `json:"namespace"`
	Releases    int            `json:"releases"`
	Revisions   int            `json:"revisions"`
	Parts       map[string]int `json:"parts,omitempty"`
	StoredBytes int64          `json:"storedBytes"`
	// HelmBytes is what Helm's Secrets driver stores of the same revisions.
	HelmBytes int64 `json:"helmSecretsBytes"`
}

func newStatsCmd(e *env) *cobra.Command {
	var all bool
	var output string
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "What the store holds per namespace, beside what Helm's Secrets driver would store",
		Long: `stats prints, per namespace, the releases, revisions and parts a store holds and the bytes it
stores, beside what Helm's Secrets driver stores of the same revisions (each revision's JSON,
gzip'd and base64'd, as Helm writes it): it reads every revision to tell.`,
		Args: cobra.NoArgs,
		RunE: e.onStore(func(ctx context.Context, s migrate.Store) error {
			lines, err := stats(ctx, s, e.namespace(all))
			if err != nil {
				return err
			}
			if output == "json" {
				enc := json.NewEncoder(e.out)
				enc.SetIndent("", "  ")
				return enc.Encode(lines)
			}
			w := tabwriter.NewWriter(e.out, 0, 8, 2, ' ', 0)
			fmt.Fprintln(w, "NAMESPACE\tRELEASES\tREVISIONS\tPARTS\tSTORED\tHELM SECRETS")
			for _, l := range lines {
				parts := "-"
				if l.Parts != nil {
					parts = fmt.Sprint(l.Parts["chart"] + l.Parts["values"] + l.Parts["manifest"])
				}
				fmt.Fprintf(w, "%s\t%d\t%d\t%s\t%s\t%s\n", l.Namespace, l.Releases, l.Revisions, parts, bytesText(l.StoredBytes), bytesText(l.HelmBytes))
			}
			return w.Flush()
		}),
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "every namespace")
	cmd.Flags().StringVarP(&output, "output", "o", "table", "table or json")
	return cmd
}

// statsParallel is how many revisions stats reads and encodes at once:
// encoding as Helm does (gzip at its best compression) is most of its work.
var statsParallel = max(2, runtime.GOMAXPROCS(0))

// stats counts what s holds in ns ("": every namespace), per namespace.
// It reads and encodes as Helm would statsParallel revisions at once.
func stats(ctx context.Context, s migrate.Store, ns string) ([]nsStats, error) {
	revs, err := s.Revisions(ctx, ns, "")
	if err != nil {
		return nil, err
	}
	by := map[string]*nsStats{}
	names := map[[2]string]bool{}
	for _, r := range revs {
		l := by[r.Namespace]
		if l == nil {
			l = &nsStats{Namespace: r.Namespace}
			by[r.Namespace] = l
		}
		l.Revisions++
		if !names[[2]string{r.Namespace, r.Name}] {
			names[[2]string{r.Namespace, r.Name}] = true
			l.Releases++
		}
	}
	var mu sync.Mutex
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(statsParallel)
	for _, r := range revs {
		g.Go(func() error {
			rls, err := s.Get(gctx, r)
			if errors.Is(err, helmdriver.ErrReleaseNotFound) {
				return nil
			}
			if err != nil {
				return fmt.Errorf("%s: %w", r, err)
			}
			n, err := migrate.HelmEncodedSize(rls)
			if err != nil {
				return err
			}
			mu.Lock()
			by[r.Namespace].HelmBytes += n
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make([]nsStats, 0, len(by))
	for _, l := range by {
		if st, ok := s.(statser); ok {
			stats, err := st.Stats(ctx, l.Namespace)
			if err != nil {
				return nil, err
			}
			l.Parts, l.StoredBytes = stats.Parts, stats.StoredBytes()
		} else {
			l.StoredBytes = l.HelmBytes
		}
		out = append(out, *l)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Namespace < out[j].Namespace })
	return out, nil
}

func newGCCmd(e *env) *cobra.Command {
	var all, dryRun bool
	cmd := &cobra.Command{
		Use:   "gc",
		Short: "Remove what writers that died left behind (crsplit, cosmos)",
		Long: `gc removes the garbage of the namespace (every namespace with -A): parts no release uses and
pending revisions of writers that died, on the stores without transactions (crsplit, cosmos). It
never removes what a readable release or a write in flight uses, and may run at any time. On the
SQL stores, redis and Helm's own drivers, whose writes leave no garbage, it does nothing.
It prints what the store held before and after; with --dry-run, what it would remove, removing
nothing.`,
		Args: cobra.NoArgs,
		RunE: e.onStore(func(ctx context.Context, s migrate.Store) error {
			c, ok := s.(collector)
			st, _ := s.(statser)
			if !ok || st == nil {
				fmt.Fprintf(e.out, "%s leaves no garbage: nothing to do\n", s.Name())
				return nil
			}
			ns := e.namespace(all)
			if dryRun {
				g, err := c.Garbage(ctx, ns)
				if err != nil {
					return err
				}
				fmt.Fprintf(e.out, "would remove: %d pending revisions of writers that died, %d unused parts, %d loose chunks (%s)\n",
					g.PendingHeads, g.Parts, g.Chunks, bytesText(g.Bytes))
				return nil
			}
			before, err := st.Stats(ctx, ns)
			if err != nil {
				return err
			}
			if err := c.Collect(ctx, ns); err != nil {
				return err
			}
			after, err := st.Stats(ctx, ns)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.out, "before: %d revisions, %d parts, %s; after: %d revisions, %d parts, %s\n",
				before.Releases, before.TotalParts(), bytesText(before.StoredBytes()), after.Releases, after.TotalParts(), bytesText(after.StoredBytes()))
			return nil
		}),
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "every namespace")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "say what would be removed, and remove nothing")
	return cmd
}
