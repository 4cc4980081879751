package engine

import (
	"context"
	"fmt"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/codec"
)

// Encrypted namespaces and stores without keys. A namespace that holds a
// keyring record (codec.KeyringKey) is encrypted at rest: a store opened
// without encryption keys (a forgotten HELM_DRIVER_ENCRYPTION_KEYS, an old
// tool's configuration) must not write a release there in plaintext, which
// a reader of the raw store could read and the keyed stores would refuse.
// Such a store reads the namespace's record (one read of one key) on every
// Create and Update, at the same time as it encodes the release's parts,
// and writes nothing if there is one; a namespace found encrypted is
// remembered for good. A store with keys never asks: it seals what it
// writes.
//
// The check and the write are two steps: a keyless write that races the
// very first encrypted write of a namespace can still land in plaintext.
// The keyed stores then refuse it (encryption.ErrNotSealed) until a seal
// pass (encryption.Seal, helmstore seal) seals it.

// encrypts reports whether b encrypts at rest, or can do nothing at all
// (a store whose keys could not be opened, unusable).
func encrypts(b driver.Backend) bool {
	switch b.(type) {
	case interface{ EncryptsAtRest() }, unusable:
		return true
	}
	return false
}

// checkPlaintext starts the check that this store, if it writes
// plaintext, may write into ns, and returns a function that waits for it:
// nil, or driver.ErrKeyUnavailable naming the namespace's key.
func (e *Engine[R]) checkPlaintext(ctx context.Context, ns string) func() error {
	if e.encrypts {
		return func() error { return nil }
	}
	if why, ok := e.sealedNS.Load(ns); ok {
		return func() error { return why.(error) }
	}
	done := make(chan error, 1)
	go func() { done <- e.readKeyring(ctx, ns) }()
	return func() error { return <-done }
}

// readKeyring reads ns's keyring record: driver.ErrKeyUnavailable naming
// its key if there is one (remembered), nil if there is none.
func (e *Engine[R]) readKeyring(ctx context.Context, ns string) error {
	hs, err := e.backend.Heads(ctx, driver.Query{Namespace: ns, Key: codec.KeyringKey})
	if err != nil || len(hs) == 0 {
		return err
	}
	kek := "a key this store cannot name (its keyring record is damaged)"
	if inner, err := hs[0].Unseal(); err == nil && hs[0].Err == nil {
		if id, ok := codec.EncryptedBy(inner); ok && id != "" {
			kek = id
		}
	}
	why := fmt.Errorf("%w: namespace %q is encrypted at rest under %s, and this store was opened without encryption keys: it stores nothing there in plaintext (give it the key: HELM_DRIVER_ENCRYPTION_KEYS)", driver.ErrKeyUnavailable, ns, kek)
	e.sealedNS.Store(ns, why)
	return why
}

// heads returns the heads q selects without the keyring records of
// encrypted namespaces, which are no release: a store with keys never
// returns them (package encryption hides them), nor does one without.
func (e *Engine[R]) heads(ctx context.Context, q driver.Query) ([]*driver.Head, error) {
	hs, err := e.backend.Heads(ctx, q)
	if err != nil || e.encrypts {
		return hs, err
	}
	out := hs[:0]
	for _, h := range hs {
		if h.Key != codec.KeyringKey {
			out = append(out, h)
		}
	}
	return out, nil
}
