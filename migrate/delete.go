package migrate

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"
)

// ErrNotMoved: DeleteSource kept revisions that the destination does not
// hold as the source does.
var ErrNotMoved = errors.New("not in the destination as in the source: kept")

// DeleteSource deletes from the source the revisions opts selects that the
// destination holds equal (Equal, read from both at the time of the
// delete), each release oldest revision first, so that the source keeps a
// release's latest revision until its last one goes; opts.Parallel
// releases at once (0 means 4). A revision the destination lacks or holds
// otherwise is kept, and DeleteSource returns ErrNotMoved naming them
// after doing the rest. It is the separate, explicit step after Run:
// killed at any point, it has deleted only what the destination held, and
// running it again goes on. opts.DryRun plans (Remove for what would go,
// Check for what would be kept), in release order; Overwrite and
// AllowPending do not apply.
func DeleteSource(ctx context.Context, from, to Store, opts Options) (Report, error) {
	start := time.Now()
	m := newMover(from, to, opts)
	revs, err := from.Revisions(ctx, opts.Namespace, opts.Release)
	if err != nil {
		return Report{}, fmt.Errorf("listing the source (%s): %w", from.Name(), err)
	}
	releases := m.selectRevisions(revs)
	rep := &m.report
	rep.Passes = 1
	rep.Releases = len(releases)
	for _, rs := range releases {
		rep.Revisions += len(rs)
	}
	if opts.Selected != nil {
		opts.Selected(rep.Releases, rep.Revisions)
	}
	// Each release's kept revisions and planned events, by its index, so
	// that both come out in release order whatever order releases end in.
	kept := make([][]string, len(releases))
	plans := make([][]Event, len(releases))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(m.opts.Parallel)
	for i, rs := range releases {
		g.Go(func() error {
			var err error
			kept[i], plans[i], err = m.deleteRelease(gctx, rs)
			return err
		})
	}
	err = g.Wait()
	for i := range releases {
		rep.Plan = append(rep.Plan, plans[i]...)
	}
	rep.Elapsed = time.Since(start)
	if err != nil {
		return *rep, err
	}
	if all := slices.Concat(kept...); len(all) > 0 {
		return *rep, fmt.Errorf("%w: %d revisions (%s)", ErrNotMoved, len(all), firstFew(all))
	}
	return *rep, nil
}

// deleteRelease is DeleteSource of one release's revisions rs, oldest
// first. It returns the revisions it kept and, on a dry run, its plan.
func (m *mover) deleteRelease(ctx context.Context, rs []Revision) (kept []string, plan []Event, err error) {
	for i, r := range rs {
		if err := ctx.Err(); err != nil {
			return kept, plan, err
		}
		a, err := m.from.Get(ctx, r)
		if errors.Is(err, helmdriver.ErrReleaseNotFound) {
			continue
		}
		if err != nil {
			return kept, plan, fmt.Errorf("%s: reading from %s: %w", r, m.from.Name(), err)
		}
		b, err := m.to.Get(ctx, r)
		eq := false
		switch {
		case err == nil:
			if eq, err = Equal(a, b); err != nil {
				return kept, plan, err
			}
		case !errors.Is(err, helmdriver.ErrReleaseNotFound):
			return kept, plan, fmt.Errorf("%s: reading from %s: %w", r, m.to.Name(), err)
		}
		ev := Event{Action: Remove, Revision: revisionIn(r.Namespace, a), Last: i == len(rs)-1}
		removed := false
		if !eq {
			kept = append(kept, r.String())
			ev.Action = Check
		} else if !m.opts.DryRun {
			if err := m.from.Delete(ctx, r); err != nil && !errors.Is(err, helmdriver.ErrReleaseNotFound) {
				return kept, plan, fmt.Errorf("%s: deleting from %s: %w", r, m.from.Name(), err)
			}
			removed = true
		}
		if m.opts.DryRun {
			plan = append(plan, ev)
		}
		m.mu.Lock()
		if removed {
			m.report.Removed++
		}
		m.emit(ev)
		m.mu.Unlock()
	}
	return kept, plan, nil
}

// firstFew joins up to 5 names and says how many more there are.
func firstFew(names []string) string {
	if len(names) <= 5 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:5], ", "), len(names)-5)
}
