// Package encryption switches on encryption at rest for helmstore's
// stores: import it, and give a store key-encryption key URLs
// (helm3.WithEncryptionKeys, helm4.WithEncryptionKeys, or
// HELM_DRIVER_ENCRYPTION_KEYS), with the package of their keeper:
//
//	import (
//		_ "github.com/helmstore/helmstore/encryption"
//		_ "gocloud.dev/secrets/localsecrets" // base64key://: tests, small setups
//		// _ "gocloud.dev/secrets/awskms", gcpkms, azurekeyvault, hashivault
//	)
//
//	HELM_DRIVER_ENCRYPTION_KEYS='base64key://<32 bytes, base64url>' HELM_DRIVER=postgres helm ...
//
// Every release's parts (chart, values, manifest) and the rest of its
// body (info with notes, hooks, ...) are sealed with AES-256-GCM under a
// data key of its namespace, which is wrapped by the first key-encryption
// key and stored with each head. Parts are stored under keyed addresses
// (HMAC-SHA-256 of their digests under the namespace's data key): still
// once per namespace, values-only upgrades still a few KiB (deltas are
// made before sealing), and a reader of the database cannot tell which
// namespaces share a values file.
//
// The revision's description is sealed too (a failed upgrade's
// description is the Kubernetes error, which can quote a value); a summary
// listing opens it with the key. What stays readable to whoever reads the
// store directly, because the store selects and lists by it: namespaces,
// release names and keys, revisions, statuses, custom labels, times, each
// part's size, and the chart name and version, app version and last
// deployment a listing shows.
//
// A namespace that holds encrypted releases keeps a keyring record, bound
// to it: a store opened without the key writes nothing there (Create and
// Update fail with ErrKeyUnavailable naming the key), and a store with the
// key refuses a release it finds there in plaintext (ErrNotSealed). Seal
// seals, in place, what a store held before encryption was turned on.
//
// Rotation: put the new key's URL first and keep the old one after it;
// new writes wrap with the new key, and what the old one wrapped still
// reads. A store opened without a key its data needs fails with
// ErrKeyUnavailable naming the key's id (kek- and 12 hex digits of the
// URL's SHA-256), never "not found".
//
// A key per namespace: an entry "team-a=URL" is current for namespace
// team-a alone (the first plain URL for every other namespace; with none,
// only the namespaces named can be written). A store given only team-a's
// key reads and writes team-a and fails with ErrKeyUnavailable in any
// other namespace: the isolation of per-namespace credentials, by
// cryptography, on every backend.
//
// Retiring a key: after the rotation, Rewrap moves the data key each
// namespace keeps to the new key; from then on a store given the new key
// alone reads every release, and the old key can go. A rewrap rewrites one
// record per namespace, never a release; it is resumable.
package encryption

import (
	"context"
	"errors"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/envelope"
	"github.com/helmstore/helmstore/internal/registry"
)

// ErrKeyUnavailable is returned when stored data needs a key-encryption key
// the store was not given, or the key refuses it; the message names the
// key's id.
var ErrKeyUnavailable = envelope.ErrKeyUnavailable

func init() {
	registry.RegisterEncryption(func(ctx context.Context, b driver.Backend, urls []string) (driver.Backend, error) {
		ring, err := envelope.OpenKeyring(ctx, urls...)
		if err != nil {
			return nil, err
		}
		return envelope.Wrap(b, ring), nil
	})
}

// RewrapResult counts what a Rewrap pass did.
type RewrapResult struct {
	Namespaces int // namespaces holding encrypted releases
	Rewrapped  int // of them, those whose data key this pass moved to the current key
}

// ErrNotEncrypted is returned by Rewrap and Seal for a store opened
// without encryption keys.
var ErrNotEncrypted = engine.ErrNotEncrypted

// Rewrap moves the data key of every namespace the store sees (all of
// them for a store scoped to "", one otherwise) to the store's current
// key-encryption key (the first URL it was given), calling progress, if
// not nil, after each namespace. Namespaces already done are skipped, so
// a pass stopped half way (cancelled, killed) is completed by running it
// again. It may run while Helm tools read and write the store: it rewrites
// no release. store is a helm3.Store or helm4.Store.
//
// Once a pass has finished, a store given only the current key reads
// every release. Releases keep the data key they were sealed with: a
// rewrap retires a key-encryption key, it does not replace data keys.
func Rewrap(ctx context.Context, store any, progress func(namespace string, rewrapped bool)) (RewrapResult, error) {
	h := engine.Of(store)
	if h == nil {
		return RewrapResult{}, errors.New("encryption.Rewrap: not a helmstore store")
	}
	r, ok := h.Backend().(interface {
		Rewrap(context.Context, string, func(string, bool)) (envelope.RewrapResult, error)
	})
	if !ok {
		return RewrapResult{}, ErrNotEncrypted
	}
	res, err := r.Rewrap(ctx, h.Scope(), progress)
	return RewrapResult{Namespaces: res.Namespaces, Rewrapped: res.Rewrapped}, err
}

// ErrNotSealed is the error (it wraps driver.ErrCorrupt) for a release that
// a store with keys finds stored in plaintext: written by a store without
// the key (an old tool, a forgotten HELM_DRIVER_ENCRYPTION_KEYS; a store of
// this version refuses to) or before encryption was turned on. Get fails
// with it, List and Query skip the release and log why, Delete removes it;
// Seal seals it.
var ErrNotSealed = envelope.ErrNotSealed

// SealResult counts what a Seal pass found.
type SealResult struct {
	Releases int // revisions seen
	Sealed   int // of them, stored in plaintext and sealed by this pass
	Damaged  int // of them, in plaintext and unreadable: left as they are
}

// Seal seals in place every revision of the store's namespace (every
// namespace for a store scoped to "") that is stored in plaintext, with
// the store's current key: the way to turn encryption on for a store that
// already holds releases, and to seal what a store without the key wrote.
// Each revision is read whole and verified, then written back sealed with
// its times and labels as they were; plaintext parts go once no revision
// uses them. progress, if not nil, is called for each revision sealed (nil
// error) or found damaged (left as it is, counted). Run it with Helm's
// writers of those namespaces stopped: a write racing the pass on the same
// revision could be undone. A rerun completes a pass that was stopped.
// store is a helm3.Store or helm4.Store opened with encryption keys;
// ErrNotEncrypted otherwise.
func Seal(ctx context.Context, store any, progress func(namespace, key string, err error)) (SealResult, error) {
	h := engine.Of(store)
	if h == nil {
		return SealResult{}, errors.New("encryption.Seal: not a helmstore store")
	}
	res, err := h.Seal(ctx, progress)
	return SealResult{Releases: res.Releases, Sealed: res.Sealed, Damaged: res.Damaged}, err
}
