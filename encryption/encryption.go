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
// What stays readable to whoever reads the store directly, because the
// store selects and lists by it: namespaces, release names and keys,
// revisions, statuses, custom labels, times, each part's size, and the
// summary a listing shows (chart name and version, app version, last
// deployed, description).
//
// Rotation: put the new key's URL first and keep the old one after it;
// new writes wrap with the new key, and what the old one wrapped still
// reads. A store opened without a key its data needs fails with
// ErrKeyUnavailable naming the key's id (kek- and 12 hex digits of the
// URL's SHA-256), never "not found".
//
// Status: the sealing works on every backend through the engine; the
// rewrap pass that moves stored keys to the current one, and the
// per-backend tests that scan raw storage, are still to come (issue 27).
package encryption

import (
	"context"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/envelope"
)

// ErrKeyUnavailable is returned when stored data needs a key-encryption key
// the store was not given, or the key refuses it; the message names the
// key's id.
var ErrKeyUnavailable = envelope.ErrKeyUnavailable

func init() {
	driver.RegisterEncryption(func(ctx context.Context, b driver.Backend, urls []string) (driver.Backend, error) {
		ring, err := envelope.OpenKeyring(ctx, urls...)
		if err != nil {
			return nil, err
		}
		return envelope.Wrap(b, ring), nil
	})
}
