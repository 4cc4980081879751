package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
)

// ErrNotEncrypted is Seal's error for a store that does not encrypt.
var ErrNotEncrypted = errors.New("the store was opened without encryption keys")

// SealResult counts what a seal pass found.
type SealResult struct {
	Releases int // revisions seen (keyring records aside)
	Sealed   int // of them, stored in plaintext and sealed by this pass
	Damaged  int // of them, in plaintext and unreadable: left as they are
}

// sealAttempts bounds how often Seal reads a revision again that changed
// while it was being sealed.
const sealAttempts = 3

// Seal seals the revisions of the view's namespace (every namespace for
// "") that its backend, which encrypts at rest, holds in plaintext:
// written by a store without the key, or before encryption was turned on.
// Each is read whole through the plaintext store under the encryption
// (verified as any read), then written back sealed in its place, with its
// times and labels as they were; its plaintext parts go once no revision
// uses them. progress, if not nil, is called for each revision sealed or
// found damaged (with the error); a damaged one is counted and left. Seal
// stops at the first other error, with what it did so far; a rerun
// completes a pass that was stopped.
//
// A revision that Helm writes while the pass seals it is read again, but
// the last check and the write are two steps: run it with the namespace's
// writers stopped, as for a migration's cut-over.
func (v *View[R]) Seal(ctx context.Context, progress func(ns, key string, err error)) (SealResult, error) {
	var res SealResult
	p, ok := v.e.backend.(interface{ Plain() driver.Backend })
	if !ok {
		return res, ErrNotEncrypted
	}
	raw := p.Plain()
	plain := New(raw, v.e.cfg, v.e.codec).Namespace(v.ns)
	report := func(ns, key string, err error) {
		if progress != nil {
			progress(ns, key, err)
		}
	}
	q := driver.ListQuery{Namespace: v.ns, Limit: 500}
	for {
		page, err := raw.List(ctx, q)
		if err != nil {
			return res, err
		}
		for _, lh := range page {
			if lh.Key == codec.KeyringKey {
				continue
			}
			res.Releases++
			sealed, err := v.sealOne(ctx, raw, plain.Namespace(lh.Namespace), lh.Namespace, lh.Key)
			switch {
			case errors.Is(err, driver.ErrCorrupt):
				res.Damaged++
				report(lh.Namespace, lh.Key, err)
			case err != nil:
				return res, err
			case sealed:
				res.Sealed++
				report(lh.Namespace, lh.Key, nil)
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

// sealOne seals revision key of ns if raw holds it in plaintext, reading
// it through plain; false if it is sealed already or gone.
func (v *View[R]) sealOne(ctx context.Context, raw driver.Backend, plain *View[R], ns, key string) (bool, error) {
	for range sealAttempts {
		before, err := plaintextHead(ctx, raw, ns, key)
		if before == nil || err != nil {
			return false, err
		}
		h, err := plain.find(ctx, key, false)
		if errors.Is(err, driver.ErrReleaseNotFound) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		parts, err := plain.e.load(ctx, []*driver.Head{h})
		if err != nil {
			return false, err
		}
		rls, err := plain.e.assemble(h, parts, h.Labels)
		if err != nil {
			return false, err
		}
		// The revision as read must still be what is stored.
		after, err := plaintextHead(ctx, raw, ns, key)
		if err != nil {
			return false, err
		}
		if after == nil || !bytes.Equal(after.Body, before.Body) || !bytes.Equal(h.Body, before.Body) {
			continue
		}
		if err := v.Namespace(ns).store(ctx, "update", key, rls, h.ModifiedAt); err != nil {
			return false, err
		}
		return true, nil
	}
	return false, fmt.Errorf("%w: release %q in namespace %q kept changing while it was being sealed", driver.ErrConflict, key, ns)
}

// plaintextHead returns the head raw holds under key in ns if its body is
// in plaintext (nil if it is sealed or gone); driver.ErrCorrupt if the
// head cannot be read.
func plaintextHead(ctx context.Context, raw driver.Backend, ns, key string) (*driver.Head, error) {
	hs, err := raw.Heads(ctx, driver.Query{Namespace: ns, Key: key})
	if err != nil || len(hs) == 0 {
		return nil, err
	}
	h := hs[0]
	if h.Err != nil {
		return nil, corrupt(h, h.Err)
	}
	inner, err := h.Unseal()
	if err != nil {
		return nil, corrupt(h, err)
	}
	if _, sealed := codec.EncryptedBy(inner); sealed {
		return nil, nil
	}
	return h, nil
}
