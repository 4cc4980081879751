package registry

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"

	"github.com/helmstore/helmstore/driver"
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

// An Encrypter returns a backend that stores through b with its releases
// encrypted under the key-encryption keys keyURLs name (the first
// current). Package encryption registers the one Encrypt uses.
type Encrypter func(ctx context.Context, b driver.Backend, keyURLs []string) (driver.Backend, error)

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
func Encrypt(ctx context.Context, b driver.Backend, cfg *driver.Config) (driver.Backend, error) {
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
