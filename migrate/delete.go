package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	helmdriver "helm.sh/helm/v4/pkg/storage/driver"
)

// ErrNotMoved: DeleteSource kept revisions that the destination does not
// hold as the source does.
var ErrNotMoved = errors.New("not in the destination as in the source: kept")

// DeleteSource deletes from the source the revisions opts selects that the
// destination holds equal (Equal, read from both at the time of the
// delete), each release oldest revision first, so that the source keeps a
// release's latest revision until its last one goes. A revision the
// destination lacks or holds otherwise is kept, and DeleteSource returns
// ErrNotMoved naming them after doing the rest. It is the separate,
// explicit step after Run: killed at any point, it has deleted only what
// the destination held, and running it again goes on. opts.DryRun plans
// (Remove for what would go, Check for what would be kept); Overwrite and
// AllowPending do not apply.
func DeleteSource(ctx context.Context, from, to Store, opts Options) (Report, error) {
	start := time.Now()
	m := &mover{from: from, to: to, opts: opts}
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
	var kept []string
	for _, rs := range releases {
		for i, r := range rs {
			if err := ctx.Err(); err != nil {
				return *rep, err
			}
			a, err := from.Get(ctx, r)
			if errors.Is(err, helmdriver.ErrReleaseNotFound) {
				continue
			}
			if err != nil {
				return *rep, fmt.Errorf("%s: reading from %s: %w", r, from.Name(), err)
			}
			b, err := to.Get(ctx, r)
			eq := false
			switch {
			case err == nil:
				if eq, err = Equal(a, b); err != nil {
					return *rep, err
				}
			case !errors.Is(err, helmdriver.ErrReleaseNotFound):
				return *rep, fmt.Errorf("%s: reading from %s: %w", r, to.Name(), err)
			}
			ev := Event{Action: Remove, Revision: revisionOf(a), Last: i == len(rs)-1}
			if !eq {
				kept = append(kept, r.String())
				ev.Action = Check
			} else if !opts.DryRun {
				if err := from.Delete(ctx, r); err != nil && !errors.Is(err, helmdriver.ErrReleaseNotFound) {
					return *rep, fmt.Errorf("%s: deleting from %s: %w", r, from.Name(), err)
				}
				rep.Removed++
			}
			if opts.DryRun {
				rep.Plan = append(rep.Plan, ev)
			}
			m.emit(ev)
		}
	}
	rep.Elapsed = time.Since(start)
	if len(kept) > 0 {
		return *rep, fmt.Errorf("%w: %d revisions (%s)", ErrNotMoved, len(kept), firstFew(kept))
	}
	return *rep, nil
}

// firstFew joins up to 5 names and says how many more there are.
func firstFew(names []string) string {
	if len(names) <= 5 {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:5], ", "), len(names)-5)
}
