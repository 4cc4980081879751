package migrate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	helmdriver "helm.sh/helm/v4/pkg/storage/driver"
)

// Options select and steer a move.
type Options struct {
	// Namespace moves the releases of one namespace; "" every namespace.
	Namespace string
	// Release moves one release (by name); "" every release.
	Release string
	// MaxRevisions moves the newest MaxRevisions revisions of each release;
	// 0 every revision.
	MaxRevisions int
	// DryRun writes nothing: the Report's Plan says what a move would do.
	DryRun bool
	// Overwrite replaces a revision present in the destination and different
	// from the source, which is otherwise an error (ErrDiffers).
	Overwrite bool
	// AllowPending moves releases whose latest revision is pending (a Helm
	// operation in flight on them), which is otherwise refused
	// (ErrPending): their next write may come after the move's last pass.
	AllowPending bool
	// Parallel is how many releases are moved at once; 0 means 4.
	Parallel int
	// Progress, if set, is called for each revision as it is done, from
	// one goroutine at a time.
	Progress func(Event)
	// Selected, if set, is called once the source is listed, with the
	// numbers of releases and revisions selected.
	Selected func(releases, revisions int)
}

// Action is what a move did, or would do, with one revision.
type Action string

// The actions of Events and plans.
const (
	// Copy: the revision was (or would be) written to the destination and
	// verified there.
	Copy Action = "copy"
	// Present: the destination already held the revision, equal.
	Present Action = "present"
	// Replace: the destination's copy differed and was (or would be)
	// replaced: with Overwrite, or because the source changed it after
	// this move had copied it.
	Replace Action = "replace"
	// Remove: the revision was deleted: from the destination, because the
	// source deleted it after this move had copied it (Helm's history
	// limit), or from the source by DeleteSource.
	Remove Action = "remove"
	// Check: a dry run found the revision in the destination; a move
	// compares it with the source.
	Check Action = "check"
)

// An Event reports one revision done.
type Event struct {
	Action   Action   `json:"action"`
	Revision Revision `json:"revision"`
	// Bytes is the size of the revision's JSON, as Helm encodes a release
	// before it compresses it; 0 for Remove and for a dry run.
	Bytes int64 `json:"bytes,omitempty"`
	// Last is set on the event of the last revision of a release that a
	// pass (or a plan) handles.
	Last bool `json:"last,omitempty"`
}

// A Report sums up a move.
type Report struct {
	// Releases and Revisions are what the move selected in the source.
	Releases  int `json:"releases"`
	Revisions int `json:"revisions"`
	// Copied, Present, Replaced and Removed count the revisions by what
	// was done (Present: found equal in the destination).
	Copied   int `json:"copied"`
	Present  int `json:"present"`
	Replaced int `json:"replaced"`
	Removed  int `json:"removed"`
	// JSONBytes is the size of the JSON of the revisions verified in the
	// destination: the releases as Helm encodes them before compressing.
	JSONBytes int64 `json:"jsonBytes"`
	// Passes is how many times the source was listed: the move repeats
	// its pass until one finds nothing new or changed.
	Passes int `json:"passes"`
	// Plan is, for a dry run, what a move would do, by revision.
	Plan    []Event       `json:"plan,omitempty"`
	Elapsed time.Duration `json:"elapsed"`
}

// Errors a move stops with.
var (
	// ErrDiffers: a revision is present in the destination and differs
	// from the source (Options.Overwrite replaces it).
	ErrDiffers = errors.New("present in the destination and different from the source")
	// ErrVerify: a revision written to the destination does not read back
	// equal to the source.
	ErrVerify = errors.New("does not read back from the destination as the source has it")
	// ErrPending: a release's latest revision is pending, a Helm operation
	// on it in flight (Options.AllowPending moves it all the same).
	ErrPending = errors.New("pending: a Helm operation on the release is in flight")
	// ErrUnsettled: the source kept changing while the move ran: a tool is
	// writing to it. Run the move again once it has stopped.
	ErrUnsettled = errors.New("the source kept changing during the move")
)

// maxPasses bounds the passes of one move.
const maxPasses = 10

// Run copies the revisions opts selects from one store to another, reading
// each back from the destination and comparing it with the source (Equal)
// before counting it done. A named release (opts.Release) that the source
// does not hold is Helm's driver.ErrReleaseNotFound. It resumes: a
// revision already in the destination and equal is skipped; one present
// and different stops the move with ErrDiffers unless opts.Overwrite. The
// source is never written.
//
// Writes to the source while Run runs are not lost: after its pass over
// the source, Run lists the source again and moves what is new, what
// changed (by status, or any change to a release's latest revision) and
// removes from the destination what it copied and the source has since
// deleted, until a pass finds nothing to do (ErrUnsettled after 10). A
// release whose latest revision is pending is refused (ErrPending) unless
// opts.AllowPending: the operation in flight may write after the last
// pass. Killed at any point, Run leaves every revision it wrote whole in
// the destination (each is one write) and the source as it was; run it
// again to finish.
func Run(ctx context.Context, from, to Store, opts Options) (Report, error) {
	start := time.Now()
	m := newMover(from, to, opts)
	err := m.run(ctx)
	m.report.Elapsed = time.Since(start)
	return m.report, err
}

// namespaceText names the namespaces ns selects: `namespace "x"`, or
// every namespace.
func namespaceText(ns string) string {
	if ns == "" {
		return "every namespace"
	}
	return fmt.Sprintf("namespace %q", ns)
}

// revID names a revision in maps.
type revID struct {
	ns, name string
	version  int
}

func idOf(r Revision) revID { return revID{r.Namespace, r.Name, r.Version} }

// newMover is a mover from from to to, opts.Parallel 4 when unset.
func newMover(from, to Store, opts Options) *mover {
	if opts.Parallel <= 0 {
		opts.Parallel = 4
	}
	return &mover{from: from, to: to, opts: opts, done: map[revID]Revision{}, owned: map[revID]bool{}}
}

type mover struct {
	from, to Store
	opts     Options

	mu     sync.Mutex
	report Report
	// done holds the revisions verified in the destination, with the
	// status they had in the source then; owned those this move wrote.
	done  map[revID]Revision
	owned map[revID]bool
}

func (m *mover) run(ctx context.Context) error {
	for pass := 1; ; pass++ {
		if pass > maxPasses {
			return ErrUnsettled
		}
		m.report.Passes = pass
		revs, err := m.from.Revisions(ctx, m.opts.Namespace, m.opts.Release)
		if err != nil {
			return fmt.Errorf("listing the source (%s): %w", m.from.Name(), err)
		}
		releases := m.selectRevisions(revs)
		if pass == 1 && m.opts.Release != "" && len(releases) == 0 {
			return fmt.Errorf("release %q in %s of %s: %w", m.opts.Release, namespaceText(m.opts.Namespace), m.from.Name(), helmdriver.ErrReleaseNotFound)
		}
		if pass == 1 {
			if err := m.checkPending(releases); err != nil {
				return err
			}
			m.report.Releases = len(releases)
			for _, rs := range releases {
				m.report.Revisions += len(rs)
			}
			if m.opts.Selected != nil {
				m.opts.Selected(m.report.Releases, m.report.Revisions)
			}
			if m.opts.DryRun {
				return m.plan(ctx, releases)
			}
		}
		work := m.work(releases, pass)
		gone := m.gone(releases)
		if len(work) == 0 && len(gone) == 0 {
			return nil
		}
		if err := m.remove(ctx, gone); err != nil {
			return err
		}
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(m.opts.Parallel)
		for _, rs := range work {
			g.Go(func() error { return m.moveRelease(gctx, rs) })
		}
		if err := g.Wait(); err != nil {
			return err
		}
	}
}

// selectRevisions groups revs by release, each release's revisions oldest
// first, keeping the newest MaxRevisions; releases in namespace and name
// order.
func (m *mover) selectRevisions(revs []Revision) [][]Revision {
	by := map[[2]string][]Revision{}
	for _, r := range revs {
		k := [2]string{r.Namespace, r.Name}
		by[k] = append(by[k], r)
	}
	keys := make([][2]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i][0] < keys[j][0] || keys[i][0] == keys[j][0] && keys[i][1] < keys[j][1]
	})
	out := make([][]Revision, 0, len(keys))
	for _, k := range keys {
		rs := by[k]
		sort.Slice(rs, func(i, j int) bool { return rs[i].Version < rs[j].Version })
		if n := m.opts.MaxRevisions; n > 0 && len(rs) > n {
			rs = rs[len(rs)-n:]
		}
		out = append(out, rs)
	}
	return out
}

// checkPending refuses releases whose latest revision is pending.
func (m *mover) checkPending(releases [][]Revision) error {
	if m.opts.AllowPending {
		return nil
	}
	var pending []string
	for _, rs := range releases {
		if last := rs[len(rs)-1]; strings.HasPrefix(last.Status, "pending") {
			pending = append(pending, fmt.Sprintf("%s (%s)", last, last.Status))
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("%w: %s; wait for it to end, or move it all the same with AllowPending (--allow-pending)", ErrPending, strings.Join(pending, ", "))
	}
	return nil
}

// work returns, of each release, the revisions a pass moves: on the first
// pass all of them; on later ones those not yet done and those whose status
// changed since they were read. Every write Helm's actions make to a
// stored revision changes its status (superseded, uninstalled, failed,
// deployed), so the status tells a changed revision from the listing alone.
func (m *mover) work(releases [][]Revision, pass int) [][]Revision {
	if pass == 1 {
		return releases
	}
	var out [][]Revision
	for _, rs := range releases {
		var w []Revision
		for _, r := range rs {
			if d, ok := m.done[idOf(r)]; !ok || d.Status != r.Status {
				w = append(w, r)
			}
		}
		if len(w) > 0 {
			out = append(out, w)
		}
	}
	return out
}

// gone returns the revisions this move wrote that the source no longer
// holds.
func (m *mover) gone(releases [][]Revision) []Revision {
	now := map[revID]bool{}
	for _, rs := range releases {
		for _, r := range rs {
			now[idOf(r)] = true
		}
	}
	var out []Revision
	for id, r := range m.done {
		if !now[id] && m.owned[id] {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

func (m *mover) remove(ctx context.Context, gone []Revision) error {
	for _, r := range gone {
		if err := m.to.Delete(ctx, r); err != nil && !errors.Is(err, helmdriver.ErrReleaseNotFound) {
			return fmt.Errorf("%s: removing from %s what the source deleted: %w", r, m.to.Name(), err)
		}
		m.mu.Lock()
		delete(m.done, idOf(r))
		delete(m.owned, idOf(r))
		m.report.Removed++
		m.emit(Event{Action: Remove, Revision: r})
		m.mu.Unlock()
	}
	return nil
}

// moveRelease moves the revisions rs of one release, oldest first, so that
// a move cut short leaves each release's older revisions in the
// destination, never a newer one without them.
func (m *mover) moveRelease(ctx context.Context, rs []Revision) error {
	for i, r := range rs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := m.moveRevision(ctx, r, i == len(rs)-1); err != nil {
			return fmt.Errorf("%s: %w", r, err)
		}
	}
	return nil
}

func (m *mover) moveRevision(ctx context.Context, r Revision, last bool) error {
	src, err := m.from.Get(ctx, r)
	if errors.Is(err, helmdriver.ErrReleaseNotFound) {
		return nil // deleted since it was listed: the next pass sees it gone
	}
	if err != nil {
		return fmt.Errorf("reading from %s: %w", m.from.Name(), err)
	}
	srcJSON, err := json.Marshal(src)
	if err != nil {
		return err
	}
	size := int64(len(srcJSON))
	r = revisionIn(r.Namespace, src)
	action := Copy
	dst, err := m.to.Get(ctx, r)
	switch {
	case err == nil:
		eq, err := equalTo(srcJSON, src.Labels, dst)
		if err != nil {
			return err
		}
		if eq {
			action = Present
			break
		}
		m.mu.Lock()
		owned := m.owned[idOf(r)]
		m.mu.Unlock()
		if !owned && !m.opts.Overwrite {
			return fmt.Errorf("%w (in %s); move it with Overwrite (--overwrite) to replace it", ErrDiffers, m.to.Name())
		}
		if err := m.to.Update(ctx, r.Namespace, src); err != nil {
			return fmt.Errorf("replacing in %s: %w", m.to.Name(), err)
		}
		action = Replace
	case errors.Is(err, helmdriver.ErrReleaseNotFound):
		if err := m.to.Create(ctx, r.Namespace, src); err != nil && !errors.Is(err, helmdriver.ErrReleaseExists) {
			return fmt.Errorf("writing to %s: %w", m.to.Name(), err)
		}
	default:
		return fmt.Errorf("reading from %s: %w", m.to.Name(), err)
	}
	if action != Present {
		back, err := m.to.Get(ctx, r)
		if err != nil {
			return fmt.Errorf("reading back from %s: %w", m.to.Name(), err)
		}
		eq, err := equalTo(srcJSON, src.Labels, back)
		if err != nil {
			return err
		}
		if !eq {
			return fmt.Errorf("%w (%s)", ErrVerify, m.to.Name())
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	id := idOf(r)
	if _, seen := m.done[id]; !seen {
		m.report.JSONBytes += size
	}
	m.done[id] = r
	switch action {
	case Copy:
		m.owned[id] = true
		m.report.Copied++
	case Replace:
		m.owned[id] = true
		m.report.Replaced++
	case Present:
		if m.report.Passes == 1 {
			m.report.Present++
		}
	}
	m.emit(Event{Action: action, Revision: r, Bytes: size, Last: last})
	return nil
}

// emit reports ev; m.mu is held.
func (m *mover) emit(ev Event) {
	if m.opts.Progress != nil {
		m.opts.Progress(ev)
	}
}

// plan fills the report's Plan for a dry run: Copy for a revision the
// destination lacks, Check for one it holds.
func (m *mover) plan(ctx context.Context, releases [][]Revision) error {
	have := map[revID]bool{}
	there, err := m.to.Revisions(ctx, m.opts.Namespace, m.opts.Release)
	if err != nil {
		return fmt.Errorf("listing the destination (%s): %w", m.to.Name(), err)
	}
	for _, r := range there {
		have[idOf(r)] = true
	}
	for _, rs := range releases {
		for i, r := range rs {
			ev := Event{Action: Copy, Revision: r, Last: i == len(rs)-1}
			if have[idOf(r)] {
				ev.Action = Check
			}
			m.report.Plan = append(m.report.Plan, ev)
			m.emit(ev)
		}
	}
	return nil
}
