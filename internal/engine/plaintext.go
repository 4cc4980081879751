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
// Such a store asks before every Create and Update whether the namespace
// has a record (one indexed read of one key) and writes nothing if it has.
// A store with keys never asks: it seals what it writes.
//
// The check and the write are two steps: a keyless write that races the
// very first encrypted write of a namespace can still land in plaintext;
// the keyed stores then refuse it (encryption.ErrNotSealed) until a seal
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

// checkPlaintext returns driver.ErrKeyUnavailable, naming the namespace's
// key, if this store writes plaintext and ns is encrypted.
func (e *Engine[R]) checkPlaintext(ctx context.Context, ns string) error {
	if e.encrypts {
		return nil
	}
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
	return fmt.Errorf("%w: namespace %q is encrypted at rest under %s, and this store was opened without encryption keys: it stores nothing there in plaintext (give it the key: HELM_DRIVER_ENCRYPTION_KEYS)", driver.ErrKeyUnavailable, ns, kek)
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
