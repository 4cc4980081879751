package cas

import (
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/caswire"
)

// The index of latest revisions (the package documentation's "Latest"):
// label LabelLatest, LatestMarked on every head created, LatestRetired on
// a committed head once a higher committed revision of its release vouched
// for it, so that a listing of the latest revisions selects the heads not
// retired and takes the highest of each release.

// retired reports whether obj is retired from the index of latest
// revisions (a head without the label counts as marked).
func retired(obj *Object) bool { return obj.Labels[caswire.LabelLatest] == caswire.LatestRetired }

// withLatest returns labels with LabelLatest set to v (a copy).
func withLatest(labels map[string]string, v string) map[string]string {
	l := maps.Clone(labels)
	if l == nil {
		l = map[string]string{}
	}
	l[caswire.LabelLatest] = v
	return l
}

// releaseOf returns the release name and revision of the head object obj:
// its record's, else its labels' (a damaged record); ok false if neither
// says.
func releaseOf(obj *Object) (name string, version int, ok bool) {
	if obj.Head != nil && obj.Head.Name != "" && obj.Head.Version > 0 {
		return obj.Head.Name, obj.Head.Version, true
	}
	v, err := strconv.Atoi(obj.Labels[driver.LabelVersion])
	name = obj.Labels[driver.LabelName]
	return name, v, err == nil && name != "" && v > 0
}

// revisions returns the readable head objects of release name in ns other
// than revision version, those below it only if below, highest first.
func (b *Backend) revisions(ctx context.Context, ns, name string, version int, below bool, sel Selector) ([]*Object, error) {
	sel.Kind, sel.Namespace = KindHead, ns
	sel.Labels = map[string]string{driver.LabelName: name}
	objs, err := b.s.List(ctx, sel)
	if err != nil {
		return nil, err
	}
	out := objs[:0]
	for _, o := range objs {
		if o.Err != nil || o.Head == nil || o.Head.Name != name || o.Head.Version == version || below && o.Head.Version > version {
			continue
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(x, y *Object) int { return cmp.Compare(y.Head.Version, x.Head.Version) })
	return out, nil
}

// commitRetiring commits obj, a head this store created, and retires from
// the index the committed heads of lower revisions of its release that
// are not retired yet (one still pending is left marked, unless this
// store is committing it: that commit is waited for, and the head read
// again). They are listed before the commit and retired
// after it, each at the version listed: a Delete that removes obj marks
// the highest revision below it before removing it (passLatest), and
// either that mark changes the version listed (the retirement fails) or
// the delete comes after the commit, which changed obj's version since the
// Delete read it (the delete fails, and reads again). The lower heads are
// locked against this store's Updates meanwhile (highest first), so that
// an Update of one of them does not race the retirement; a head this
// store updated since it was listed is read again before the commit. A
// retirement that fails (lost races, an error) leaves a head marked: the
// listing then reads one more head, and takes the highest.
func (b *Backend) commitRetiring(ctx context.Context, obj *Object) error {
	var older []*Object
	if !retired(obj) && obj.Head != nil && obj.Head.Name != "" {
		older, _ = b.revisions(ctx, obj.Namespace, obj.Head.Name, obj.Head.Version, true, Selector{Not: map[string]string{caswire.LabelLatest: caswire.LatestRetired}})
		for i, o := range older {
			if isPending(o) && len(b.bg.tasks(o.Namespace, o.Head.Key)) > 0 {
				// This store's own Create of it, committing: once that
				// is done, read again (before this commit).
				if b.bg.wait(ctx, o.Namespace, o.Head.Key) == nil {
					if cur, err := b.getHead(ctx, o.Namespace, o.Name); err == nil && cur != nil && cur.Err == nil && cur.UID == o.UID {
						older[i] = cur
					}
				}
			}
		}
		older = slices.DeleteFunc(older, func(o *Object) bool { return isPending(o) || o.UID == obj.UID })
	}
	for i, o := range older {
		unlock, err := b.writing.lock(ctx, o.Namespace, o.Head.Key)
		if err != nil {
			older = older[:i]
			break
		}
		defer unlock()
		if s, ok := b.seen.get(o.Namespace, o.Head.Key); ok && s.UID == o.UID && s.Version != o.Version {
			// Updated by this store since listed (before the commit).
			if cur, err := b.getHead(ctx, o.Namespace, o.Name); err == nil && cur != nil && cur.Err == nil && cur.UID == o.UID && !isPending(cur) {
				older[i] = cur
			}
		}
	}
	if err := b.commit(ctx, obj); err != nil {
		return err
	}
	for _, o := range older {
		if retired(o) {
			continue
		}
		c := *o
		c.Labels = withLatest(o.Labels, caswire.LatestRetired)
		if answer, err := b.s.Replace(ctx, &c); err == nil {
			b.seen.saw(stored(&c, answer))
		} else {
			b.seen.forget(o.Namespace, o.Head.Key, o.Version)
		}
	}
	return nil
}

// passLatest, before a Delete removes obj (read at its version), makes
// sure that the highest visible revision below it is marked in the index,
// unless obj is retired (then a higher revision vouched for it, and is
// marked or has done the same). A committed one is written marked even if
// it is marked already, so that a retirement listed before this (relying
// on obj) fails at the version it listed; a pending one is marked since
// its create and cannot be retired before its commit. It reports whether
// the Delete may go on (false: a race, to run again from the read).
func (b *Backend) passLatest(ctx context.Context, obj *Object) (bool, error) {
	if retired(obj) {
		return true, nil
	}
	name, version, ok := releaseOf(obj)
	if !ok {
		return true, nil
	}
	lower, err := b.revisions(ctx, obj.Namespace, name, version, true, Selector{})
	if err != nil {
		return false, err
	}
	for _, o := range lower {
		if o.UID == obj.UID || isHidden(o) {
			continue
		}
		if isPending(o) {
			vis, err := b.visible(ctx, o, nil)
			if err != nil {
				return false, err
			}
			if vis {
				return true, nil
			}
			continue
		}
		c := *o
		c.Labels = withLatest(o.Labels, caswire.LatestMarked)
		answer, err := b.s.Replace(ctx, &c)
		switch {
		case err == nil:
			b.seen.saw(stored(&c, answer))
			return true, nil
		case errors.Is(err, ErrVersionMismatch) || errors.Is(err, ErrNotFound):
			b.seen.forget(o.Namespace, o.Head.Key, o.Version)
			return false, nil
		}
		return false, err
	}
	return true, nil
}
