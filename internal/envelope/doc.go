// Package envelope is the key hierarchy and the sealed frames of encryption
// at rest (issue 27): what a store configured for encryption writes in place
// of the plaintext frames of a release's sensitive parts and of its head's
// body. It knows no Helm version and no backend.
//
// # Objects
//
//   - A key-encryption key (KEK) lives in a key service and never leaves it:
//     a gocloud.dev/secrets Keeper, opened by URL (base64key:// for tests
//     and small setups, awskms://, gcpkms://, azurekeyvault://,
//     hashivault://; each registered by importing its gocloud package, so a
//     binary links only the keeper it uses). Its id is a digest of its URL
//     (KEKID), never the URL, which may hold the key itself.
//   - A data key (DataKey) is 32 random bytes made here, one per namespace:
//     it encrypts (AES-256-GCM) and addresses (HMAC-SHA-256 of a part's
//     digest) the namespace's parts. Its id is random and recorded in every
//     frame it seals.
//   - A wrapped data key (Wrapped) is a data key encrypted by a KEK, with
//     the KEK's id and the data key's id beside the ciphertext. A store
//     keeps it with the data it protects; a Keyring unwraps it.
//   - A Keyring holds the current KEK, which wraps new data keys, and older
//     KEKs, which only unwrap: rotation is adding a KEK in front.
//
// # Contracts
//
//   - A sealed frame (DataKey.Seal) is Magic, the data key's id, a fresh
//     12-byte nonce, and the AES-GCM ciphertext of the plaintext with
//     additional data chosen by the caller (the namespace and address of
//     what the frame holds, so that a frame moved to another place in the
//     store does not open). Open fails with driver.ErrCorrupt on any change
//     to the frame or its additional data, and with ErrKeyMismatch (naming
//     both ids) when the frame was sealed by another data key.
//   - Unwrap fails with ErrKeyUnavailable naming the KEK id when the
//     Keyring does not hold that KEK, and with ErrKeyUnavailable too when
//     the KEK refuses the wrapped key (the wrong key under a reused URL, or
//     a damaged wrapped key): never "not found", never garbage.
//   - Addresses (DataKey.Address) are deterministic for one data key, so
//     parts are still stored once per namespace, and unrelated across data
//     keys, so a reader of the raw store cannot tell which namespaces share
//     a values file. Deltas are computed on plaintext before sealing.
//   - No error or String of this package holds key material or a keeper
//     URL.
//
// # Rotation
//
// A new KEK goes in front of the Keyring: data keys wrapped from then on
// use it, and those wrapped before still unwrap with the KEK behind it.
// Rewrap re-wraps a Wrapped under the current KEK, keeping the data key
// (so frames and addresses stay as they are): a rewrap pass rewrites only
// the wrapped keys a store keeps, never its parts, and is resumable because
// a wrapped key already under the current KEK is left alone
// (Keyring.Current).
package envelope
