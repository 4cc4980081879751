package cas

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/casprobe"
	"github.com/helmstore/helmstore/internal/caswire"
)

// Create stores h in two sequential rounds of store calls: the head object
// labelled pending, then, in parallel, every part it references referred
// to by it (and its chunked body). See the package documentation for why
// readers never see it incomplete, and how a failure or a crash is undone.
func (b *Backend) Create(ctx context.Context, h *driver.Head, parts []*driver.Part) error {
	// An earlier Create of the key may still be rolling back.
	if err := b.bg.wait(ctx, h.Namespace, h.Key); err != nil {
		return err
	}
	start := b.cfg.Clock.Now()
	add, _, err := driver.DiffParts(nil, h, parts)
	if err != nil {
		return err
	}
	embedded, add := b.embedParts(h, add, nil)
	body := b.splitBody(h)
	obj := b.headObject(h, body, embedded)
	obj.Labels = withLatest(obj.Labels, caswire.LatestMarked)
	until := b.pendingWindow(ctx)
	markPending(obj, until)
	// No write that can make the head visible after its window.
	wctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	// Compress the parts likely to be written while the head is being
	// created (Frame is computed once, on first use).
	go b.precompute(h.Namespace, add)
	created, err := b.createHead(wctx, obj)
	if err != nil {
		return err
	}
	err = b.writeReferenced(wctx, h.Namespace, add, created, body)
	if err == nil && b.hooks().BeforeCommit != nil {
		err = b.hooks().BeforeCommit(h)
	}
	if err != nil {
		if errors.Is(err, casprobe.ErrCrash) {
			return err
		}
		return b.abandon(ctx, created, err)
	}
	b.seen.saw(created)
	if now := b.cfg.Clock.Now(); now.Sub(start) < b.pendingAfter()/fastCommitFraction && now.Before(until) {
		b.commitLater(created)
		return nil
	}
	return b.commitNow(ctx, created)
}

// fastCommitFraction: a Create that took less than PendingTimeout divided by
// this, and ended within its pending window, commits in the background. A
// slower one commits before returning, and fails if its head was taken
// for abandoned and removed meanwhile (the commit and the removal are
// both at the version the head was created at: one of them fails).
const fastCommitFraction = 10

// stored returns obj with the metadata the store answered a write with.
func stored(obj, answer *Object) *Object {
	o := *obj
	o.UID, o.Version, o.Created = answer.UID, answer.Version, answer.Created
	if answer.Labels != nil {
		o.Labels = answer.Labels
	}
	return &o
}

// relabel writes obj back with labels instead of its own, if it is still
// at obj's version, and returns it as written.
func (b *Backend) relabel(ctx context.Context, obj *Object, labels map[string]string) (*Object, error) {
	c := *obj
	c.Labels = labels
	answer, err := b.s.Replace(ctx, &c)
	if err != nil {
		return nil, err
	}
	return stored(&c, answer), nil
}

// commit removes the pending labels from obj, if it is still at obj's
// version.
func (b *Backend) commit(ctx context.Context, obj *Object) error {
	labels := maps.Clone(obj.Labels)
	for _, l := range []string{caswire.LabelPending, caswire.LabelWriter, caswire.LabelPendingUntil} {
		delete(labels, l)
	}
	committed, err := b.relabel(ctx, obj, labels)
	if err == nil {
		b.seen.saw(committed)
	}
	return err
}

// commitLater commits obj in the background. Losing to another write is
// fine: an Update commits too, and a Delete needs no commit.
func (b *Backend) commitLater(obj *Object) {
	b.bg.start("commit", "the release is stored and readable (readers check its parts until it is committed); "+
		"its next Update commits it, as does the next Create of its key, a Delete in its namespace or Collect once it is stale",
		obj.Namespace, obj.Head.Key, b.cfg.CleanupTimeout, func(ctx context.Context) error {
			err := b.commitRetiring(ctx, obj)
			if errors.Is(err, ErrVersionMismatch) || errors.Is(err, ErrNotFound) {
				// Fine if another client updated or deleted the release
				// since; not if it is gone or replaced without either.
				if cur, gerr := b.getHead(ctx, obj.Namespace, obj.Name); gerr == nil && cur != nil && cur.UID == obj.UID {
					return nil // updated since, which committed it
				}
				err = fmt.Errorf("the release is gone (%v): deleted by another client, or removed as stale by a cleanup whose clock runs ahead of the store's", err)
			}
			if err != nil && !stopped(ctx) {
				b.log("helmstore: committing release %q in namespace %q (it is stored and readable; readers check its parts until it is committed): %v",
					obj.Head.Key, obj.Namespace, err)
			}
			return err
		})
}

// commitNow commits obj before Create returns, for a Create so slow that a
// cleanup of stale pending heads could have removed it: then the Create
// fails.
func (b *Backend) commitNow(ctx context.Context, obj *Object) error {
	err := b.commit(ctx, obj)
	if err == nil || !errors.Is(err, ErrVersionMismatch) && !errors.Is(err, ErrNotFound) {
		return err
	}
	cur, gerr := b.getCommitted(ctx, obj.Namespace, obj.Head.Key)
	if gerr != nil && !errors.Is(gerr, driver.ErrReleaseNotFound) {
		return gerr
	}
	if gerr == nil && cur.UID == obj.UID {
		return nil // committed, or updated, by someone else
	}
	return fmt.Errorf("%w: the release was removed before it was committed (the create took longer than %s)", ErrConflict, b.pendingAfter()/fastCommitFraction)
}

// createHead creates obj, taking over an abandoned pending head of the
// same name. A create whose answer does not come may have happened: the
// head is read, and if it is this Create's (its writer token), the Create
// goes on with it.
func (b *Backend) createHead(ctx context.Context, obj *Object) (*Object, error) {
	for attempt := 0; ; attempt++ {
		answer, err := b.s.Create(ctx, obj)
		if err == nil {
			return stored(obj, answer), nil
		}
		if !errors.Is(err, ErrExists) {
			if own := b.ownHead(ctx, obj); own != nil {
				return own, nil
			}
			return nil, err
		}
		old, gerr := b.getHead(ctx, obj.Namespace, obj.Name)
		switch {
		case gerr != nil:
			return nil, gerr
		case mine(old, obj):
			return stored(obj, old), nil // a create sent again after its answer was lost
		case attempt > 0:
			return nil, driver.ErrReleaseExists
		case old == nil:
			continue // deleted meanwhile: try again
		case !b.stale(old):
			return nil, driver.ErrReleaseExists
		}
		if kept, err := b.collectStale(ctx, old); err != nil {
			return nil, err
		} else if kept {
			return nil, driver.ErrReleaseExists
		}
	}
}

// collectStale handles a stale pending head: one that is complete (its
// writer stopped after step 2, before the commit) is committed and kept;
// one that is not is removed with its parts. One that cannot be checked (an
// error) is kept.
func (b *Backend) collectStale(ctx context.Context, obj *Object) (kept bool, err error) {
	complete, err := b.visible(ctx, obj, nil)
	if err != nil {
		return true, err
	}
	key := b.keyOf(obj)
	if complete {
		if err := b.commit(ctx, obj); err != nil && !errors.Is(err, ErrVersionMismatch) {
			b.log("helmstore: committing release %q in namespace %q left uncommitted by its writer: %v", key, obj.Namespace, err)
		}
		return true, nil
	}
	b.log("helmstore: removing release %q in namespace %q left pending since %s by a writer that did not finish", key, obj.Namespace, obj.Created)
	return false, b.removeHead(ctx, obj)
}

// precompute computes the frames of the small parts the store has not seen
// in ns, which ensurePart will create.
func (b *Backend) precompute(ns string, parts []*driver.Part) {
	for _, p := range parts {
		if p.Size <= createFirstBytes && !b.knows(ns, p.Digest) {
			p.Frame()
		}
	}
}

// writeReferenced stores ps, parts the head references (all of them on
// Create, the new ones on Update), and its chunked body, all referred to by
// the head object head, in namespace ns.
func (b *Backend) writeReferenced(ctx context.Context, ns string, ps []*driver.Part, head *Object, body *headBody) error {
	owner := Referrer{Kind: KindHead, Name: head.Name, UID: head.UID}
	n := len(ps)
	if body.chunks != nil {
		n++
	}
	return b.parallel(ctx, n, func(ctx context.Context, i int) error {
		if i < len(ps) {
			if hook := b.hooks().BeforePart; hook != nil {
				if err := hook(ps[i]); err != nil {
					return err
				}
			}
			if err := b.ensurePart(ctx, ns, ps[i], owner); err != nil {
				return fmt.Errorf("store %s part %s: %w", ps[i].Kind, ps[i].Digest.Short(), err)
			}
			return nil
		}
		return b.writeBody(ctx, head, body)
	})
}

// writeBody stores a chunked head body, referred to by its head object.
func (b *Backend) writeBody(ctx context.Context, head *Object, body *headBody) error {
	cs := body.chunks
	chunks := driver.Chunks(body.frame, b.cfg.ChunkBytes)
	self := Referrer{Kind: KindHead, Name: head.Name, UID: head.UID}
	return b.writeChunks(ctx, head.Namespace, self, head.Name, bodyChunkNames(head, cs), chunks)
}

// removeHead deletes head (if it is still at the same version) and cleans
// up its parts and chunks.
func (b *Backend) removeHead(ctx context.Context, head *Object) error {
	err := b.s.Delete(ctx, head.Ref(), head.Version)
	if err != nil && !errors.Is(err, ErrNotFound) {
		if errors.Is(err, ErrVersionMismatch) {
			return nil // replaced by another writer: not ours any more
		}
		return err
	}
	return b.cleanupHead(ctx, head)
}

// cleanupHead drops a deleted head's references to its parts (deleting
// those no live head refers to) and deletes its body chunks. Of a damaged
// head, only the parts whose digests parse, and its chunks if their count
// is believable.
func (b *Backend) cleanupHead(ctx context.Context, head *Object) error {
	refs := someRefsOf(head)
	var body *chunkSet
	if head.Head != nil && head.Head.BodyChunks != nil {
		c := bodyChunks(head, head.Head.BodyChunks)
		body = &c
	}
	return b.parallel(ctx, len(refs)+1, func(ctx context.Context, i int) error {
		if i == len(refs) {
			if body == nil {
				return nil
			}
			return b.deleteChunkSet(ctx, *body)
		}
		if err := b.cleanupPart(ctx, head.Namespace, refs[i].Kind, refs[i].Digest, head.UID); err != nil {
			return fmt.Errorf("clean up %s part %s: %w", refs[i].Kind, refs[i].Digest.Short(), err)
		}
		return nil
	})
}

// sweepPending removes the stale pending heads of ns, with their parts.
func (b *Backend) sweepPending(ctx context.Context, ns string) {
	objs, err := b.s.List(ctx, Selector{Kind: KindHead, Namespace: ns, Has: []string{caswire.LabelPending}})
	if err != nil {
		b.log("helmstore: looking for releases left pending in namespace %q: %v", ns, err)
		return
	}
	for _, obj := range objs {
		if !b.stale(obj) {
			continue
		}
		if _, err := b.collectStale(ctx, obj); err != nil {
			b.log("helmstore: cleaning up after release %q in namespace %q: %v", b.keyOf(obj), ns, err)
		}
	}
}
