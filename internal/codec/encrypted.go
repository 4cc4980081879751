package codec

import "github.com/helmstore/helmstore/driver"

// What package encryption stores that the engine must recognise without
// it: a sealed head body, and the keyring record of an encrypted namespace.

// EncryptedBody is the first byte of a head body (inside its seal,
// Head.Unseal) that package encryption encrypted.
const EncryptedBody = 0xE6

// KeyringKey is the key of a namespace's keyring record, which package
// encryption keeps in every namespace it encrypts (a head no Helm release
// has: Helm numbers revisions from 1). A namespace that holds one is
// encrypted: a store opened without encryption keys writes nothing there.
var KeyringKey = driver.MakeKey("helmstore-keyring", 0)

// EncryptedBy returns the id of the key-encryption key that wrapped the
// data key of inner, a head body inside its seal, and whether encryption
// encrypted it at all.
func EncryptedBy(inner []byte) (string, bool) {
	// EncryptedBody, a 2-byte length, then the wrapped key: a version
	// byte, the key id's length and the key id.
	if len(inner) < 5 || inner[0] != EncryptedBody {
		return "", false
	}
	n := int(inner[4])
	if len(inner) < 5+n {
		return "", true
	}
	return string(inner[5 : 5+n]), true
}
