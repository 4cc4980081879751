package cas

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/caswire"
)

// markPending labels obj, a head about to be created, pending=parts, with
// a new writer token and the end of its pending window, until.
func markPending(obj *Object, until time.Time) {
	token := make([]byte, 8)
	rand.Read(token)
	obj.Labels[caswire.LabelPending] = caswire.PendingParts
	obj.Labels[caswire.LabelWriter] = hex.EncodeToString(token)
	obj.Labels[caswire.LabelPendingUntil] = strconv.FormatInt(until.UnixMilli(), 10)
}

// pendingWindow returns when the pending window of a Create starting now
// on ctx ends: PendingTimeout from now (by Config.Clock), or ctx's
// deadline if sooner.
func (b *Backend) pendingWindow(ctx context.Context) time.Time {
	until := b.cfg.Clock.Now().Add(b.cfg.PendingTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(until) {
		until = dl
	}
	return until
}

// mine reports whether obj is the head written by the Create that labelled
// head (same writer token).
func mine(obj, head *Object) bool {
	t := head.Labels[caswire.LabelWriter]
	return t != "" && obj != nil && obj.Labels[caswire.LabelWriter] == t
}

// stale reports whether obj is an abandoned pending head: one its writer
// makes visible no more. That is one hidden by its writer (being removed
// after a failed Create), one whose pending window ended more than
// ClockSkew ago, and one older than PendingTimeout (whatever it says, and
// every head written before pending windows); by Config.Clock.
func (b *Backend) stale(obj *Object) bool {
	if !isPending(obj) {
		return false
	}
	now := b.cfg.Clock.Now()
	if now.Sub(obj.Created) > b.pendingAfter() {
		return true
	}
	if obj.Labels[caswire.LabelWriter] == "" {
		return false
	}
	if isHidden(obj) {
		return true
	}
	until, err := strconv.ParseInt(obj.Labels[caswire.LabelPendingUntil], 10, 64)
	return err == nil && now.After(time.UnixMilli(until).Add(b.cfg.ClockSkew))
}

// ownHead is for a Create of the head obj whose answer did not come: it
// may have happened. It reads the head: obj as stored if it is this
// Create's (then the Create goes on), else nil (also when the read fails:
// a head the Create may have left is abandoned once its window ends).
func (b *Backend) ownHead(ctx context.Context, obj *Object) *Object {
	cur, err := b.getHead(ctx, obj.Namespace, obj.Name)
	if err == nil && mine(cur, obj) {
		return stored(obj, cur)
	}
	return nil
}

// errKept: the Create being rolled back happened (another writer found it
// whole and changed it).
var errKept = errors.New("the create happened")

// abandon undoes a Create whose parts could not all be stored (failed):
// the rollback runs in the background, and abandon waits for it until
// ctx ends. It returns failed, or nil if the Create turned out to have
// happened (another writer saw the release whole and updated it).
func (b *Backend) abandon(ctx context.Context, head *Object, failed error) error {
	t := b.bg.start("rollback", "the create failed; its head is abandoned, and removed with what it wrote by the next Create of its key, a Delete in its namespace or Collect",
		head.Namespace, head.Head.Key, b.cfg.CleanupTimeout, func(ctx context.Context) error { return b.rollback(ctx, head) })
	if err, werr := t.wait(ctx); werr == nil && errors.Is(err, errKept) {
		b.log("helmstore: release %q in namespace %q was stored and updated by another client although this create reported: %v",
			head.Head.Key, head.Namespace, failed)
		return nil
	}
	return failed
}

// rollback removes head, written by a Create that failed, with what it
// wrote. A write whose answer was lost may have made the release visible
// for a moment, so the head is first hidden (LabelPending=PendingHidden,
// at its version): from then on it is never shown, and any writer may
// remove it. Then it is deleted (at that version) and its parts lose it as
// referrer. Every write that fails, or whose answer does not come, is
// followed by a read of the head, which tells what happened and what to
// write next; the rollback stops when the head is gone, or when that read
// fails too (then the head is left, abandoned: at once if it is hidden,
// else once its pending window ends). If another writer changed the head
// before it was hidden, that writer saw the release whole and updated it:
// the Create happened (errKept), and is kept.
func (b *Backend) rollback(ctx context.Context, head *Object) error {
	key := b.keyOf(head)
	cur := head
	err := b.retry(ctx, fmt.Sprintf("roll back the create of release %q in namespace %q", key, head.Namespace), func(ctx context.Context) (bool, error) {
		if !isHidden(cur) {
			labels := map[string]string{driver.LabelOwner: head.Head.Owner}
			for _, l := range []string{caswire.LabelWriter, caswire.LabelPendingUntil} {
				if v, ok := head.Labels[l]; ok {
					labels[l] = v
				}
			}
			labels[caswire.LabelPending] = caswire.PendingHidden
			hidden, err := b.relabel(ctx, cur, labels)
			if err == nil {
				cur = hidden
			} else if b.persistent(err) {
				return true, err
			}
		}
		if isHidden(cur) {
			err := b.s.Delete(ctx, cur.Ref(), cur.Version)
			if err == nil || errors.Is(err, ErrNotFound) {
				return true, nil
			}
			if b.persistent(err) {
				return true, err
			}
		}
		// A write failed, or its answer was lost: read what happened.
		now, err := b.getHead(ctx, head.Namespace, head.Name)
		switch {
		case err != nil:
			return true, err
		case now == nil || now.UID != head.UID:
			return true, nil // deleted (by this rollback, or a cleanup)
		case isHidden(now) && mine(now, head):
			cur = now
		case now.Version == head.Version:
			cur = head
		default:
			return true, errKept
		}
		return false, nil
	})
	if err != nil {
		if !errors.Is(err, errKept) && !stopped(ctx) {
			b.log("helmstore: rolling back a failed create of release %q in namespace %q: %v (its head is abandoned: the next Create of its key, a Delete in its namespace or Collect removes it)",
				key, head.Namespace, err)
		}
		return err
	}
	if err := b.cleanupHead(ctx, head); err != nil && !stopped(ctx) {
		b.log("helmstore: cleaning up after a failed create of %q in namespace %q: %v (what it wrote is referred to by it only, and Collect removes it)",
			key, head.Namespace, err)
	}
	return nil
}

// persistent reports whether err will recur on every call until an
// operator acts (Config.Persistent).
func (b *Backend) persistent(err error) bool { return b.cfg.Persistent != nil && b.cfg.Persistent(err) }
