package driver

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
)

// EncryptionKeysEnv names the environment variable that switches on
// encryption at rest for every store a face's NewConfig configures: a
// comma-separated list of key-encryption key URLs (gocloud.dev/secrets
// keeper URLs), the first current, the others kept to read what older
// keys wrapped. The program must import package
// github.com/helmstore/helmstore/encryption (and the keeper's package).
const EncryptionKeysEnv = "HELM_DRIVER_ENCRYPTION_KEYS"

// EncryptionKeysFromEnv returns the key URLs EncryptionKeysEnv lists (nil
// if it is unset or empty).
func EncryptionKeysFromEnv() []string {
	var urls []string
	for _, u := range strings.Split(os.Getenv(EncryptionKeysEnv), ",") {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	return urls
}

// ErrKeyUnavailable is returned when stored data is encrypted under a
// key-encryption key the store was not given (or that refuses it), and
// when a store opened without encryption keys reads encrypted data; the
// message names the key's id.
var ErrKeyUnavailable = errors.New("encryption key unavailable")

// EncryptedBody is the first byte of a head body (inside its seal,
// Head.Unseal) that package encryption encrypted.
const EncryptedBody = 0xE6

// KeyringKey is the key of a namespace's keyring record, which package
// encryption keeps in every namespace it encrypts (a head no Helm release
// has: Helm numbers revisions from 1). A namespace that holds one is
// encrypted: a store opened without encryption keys writes nothing there.
var KeyringKey = MakeKey("helmstore-keyring", 0)

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

// An Encrypter returns a backend that stores through b with its releases
// encrypted under the key-encryption keys keyURLs name (the first
// current). Package encryption registers the one Encrypt uses.
type Encrypter func(ctx context.Context, b Backend, keyURLs []string) (Backend, error)

var (
	encMu     sync.RWMutex
	encrypter Encrypter
)

// RegisterEncryption sets the Encrypter that Encrypt wraps a backend with
// when its Config has EncryptionKeys. Package encryption calls it in init.
func RegisterEncryption(e Encrypter) {
	encMu.Lock()
	defer encMu.Unlock()
	encrypter = e
}

// errNoEncryption is Encrypt's error for keys given to a program that
// registered no Encrypter.
var errNoEncryption = errors.New("encryption keys are configured, but this program does not include encryption: import github.com/helmstore/helmstore/encryption")

// Encrypt returns b wrapped by the registered Encrypter as
// cfg.EncryptionKeys say: b itself if there are none, or if b encrypts
// already (it has a method EncryptsAtRest). It closes b if it fails. The
// engine calls it on every backend a face is given.
func Encrypt(ctx context.Context, b Backend, cfg *Config) (Backend, error) {
	if len(cfg.EncryptionKeys) == 0 {
		return b, nil
	}
	if _, ok := b.(interface{ EncryptsAtRest() }); ok {
		return b, nil
	}
	encMu.RLock()
	e := encrypter
	encMu.RUnlock()
	if e == nil {
		b.Close()
		return nil, errNoEncryption
	}
	eb, err := e(ctx, b, cfg.EncryptionKeys)
	if err != nil {
		b.Close()
		return nil, err
	}
	return eb, nil
}
