package envelope

import (
	"context"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/driver"
)

// Rewrapping (see Rotation in the package doc). A namespace's keyring
// record holds the data key that seals its releases; every head also
// carries it, wrapped as it was when the head was written. Rewrap moves
// each record's wrapped key to the current KEK, and a reader whose Keyring
// lacks the KEK a head names takes the key from the namespace's record
// instead (bodyKey, recordKey): once a pass has run, the old KEK can be
// retired without rewriting a single head. Heads are never rewritten,
// because the backend interface has no conditional update and a head
// rewritten here could undo a Helm write made meanwhile; the record is
// written by nothing else once made.

// RewrapResult counts what a Rewrap pass found.
type RewrapResult struct {
	Namespaces int // keyring records seen
	Rewrapped  int // records moved to the current KEK by this pass
}

// Rewrap moves the data key of every namespace's keyring record (ns, or
// every namespace for "") to the Keyring's current KEK, calling done after
// each namespace with whether it was rewritten. A record already under the
// current KEK is left alone, so a pass stopped half way (its context
// cancelled, the process killed) is resumed by running it again. It stops
// at the first error, with what it did so far.
func (s *sealing) Rewrap(ctx context.Context, ns string, done func(ns string, rewrapped bool)) (RewrapResult, error) {
	var res RewrapResult
	q := driver.ListQuery{Namespace: ns, NamePrefix: keyringName, Statuses: []string{keyringStatus}, Limit: 500}
	for {
		page, err := s.b.List(ctx, q)
		if err != nil {
			return res, err
		}
		for _, h := range page {
			if !isKeyring(h) {
				continue
			}
			res.Namespaces++
			changed, err := s.rewrapRecord(ctx, h.Namespace)
			if err != nil {
				return res, err
			}
			if changed {
				res.Rewrapped++
			}
			if done != nil {
				done(h.Namespace, changed)
			}
			if err := ctx.Err(); err != nil {
				return res, err
			}
		}
		if len(page) < q.Limit {
			return res, nil
		}
		q.After = driver.CursorOf(page[len(page)-1])
	}
}

// rewrapRecord rewrites ns's keyring record with its data key wrapped by
// the current KEK, unless it already is and is bound to ns (or the record
// has gone).
func (s *sealing) rewrapRecord(ctx context.Context, ns string) (bool, error) {
	rec, err := s.readRecord(ctx, ns)
	if errors.Is(err, errNoRecord) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	cur, err := s.ring.Current(ns)
	if err != nil {
		return false, fmt.Errorf("namespace %q: %w", ns, err)
	}
	if rec.wrapped.KEK == cur && !rec.legacy {
		return false, nil
	}
	nw, err := s.ring.Wrap(ctx, ns, rec.key)
	if err != nil {
		return false, fmt.Errorf("namespace %q: %w", ns, err)
	}
	if err := s.writeRecord(ctx, ns, rec.key, nw.Encode(), rec.head); err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return false, fmt.Errorf("namespace %q: %w", ns, err)
	}
	return true, nil
}
