package envelope

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"gocloud.dev/secrets"

	"github.com/helmstore/helmstore/driver"
)

// ErrKeyUnavailable is returned when a wrapped data key cannot be
// unwrapped: its KEK is not in the Keyring, or the KEK refuses it (the
// wrong key, or a damaged wrapped key). The message names the KEK's id.
var ErrKeyUnavailable = driver.ErrKeyUnavailable

// A Keyring wraps data keys under its current KEK and unwraps them under
// any of its KEKs. Safe for concurrent use.
type Keyring struct {
	ids     []string // ids[0] is the current KEK
	keepers map[string]*secrets.Keeper
}

// OpenKeyring opens the KEKs named by urls (gocloud.dev/secrets keeper
// URLs; the keeper's package must be imported to register its scheme):
// the first is current, the others only unwrap. Errors never hold a URL.
func OpenKeyring(ctx context.Context, urls ...string) (*Keyring, error) {
	if len(urls) == 0 {
		return nil, errors.New("encryption: no key-encryption key URL")
	}
	k := &Keyring{keepers: make(map[string]*secrets.Keeper, len(urls))}
	for _, u := range urls {
		id := KEKID(u)
		if _, dup := k.keepers[id]; dup {
			continue
		}
		kp, err := secrets.OpenKeeper(ctx, u)
		if err != nil {
			k.Close()
			return nil, fmt.Errorf("encryption: opening key-encryption key %s: %s", id, scrub(err, u))
		}
		k.ids = append(k.ids, id)
		k.keepers[id] = kp
	}
	return k, nil
}

// KEKID is the id of the KEK a keeper URL names: "kek-" and 12 hex digits
// of the URL's SHA-256. It reveals nothing of a key held in the URL.
func KEKID(keeperURL string) string {
	sum := sha256.Sum256([]byte(keeperURL))
	return "kek-" + hex.EncodeToString(sum[:6])
}

// Current is the id of the KEK that wraps new data keys.
func (k *Keyring) Current() string { return k.ids[0] }

// Close closes the keepers.
func (k *Keyring) Close() error {
	var errs []error
	for _, kp := range k.keepers {
		errs = append(errs, kp.Close())
	}
	return errors.Join(errs...)
}

// Wrap encrypts dk under the current KEK.
func (k *Keyring) Wrap(ctx context.Context, dk *DataKey) (Wrapped, error) {
	id := k.Current()
	ct, err := k.keepers[id].Encrypt(ctx, dk.secret[:])
	if err != nil {
		return Wrapped{}, fmt.Errorf("encryption: wrapping data key %s with %s: %w", dk.ID(), id, err)
	}
	return Wrapped{KEK: id, DataKey: dk.id, Ciphertext: ct}, nil
}

// Unwrap decrypts w with its KEK; ErrKeyUnavailable naming the KEK if the
// Keyring does not hold it or it refuses w.
func (k *Keyring) Unwrap(ctx context.Context, w Wrapped) (*DataKey, error) {
	kp, ok := k.keepers[w.KEK]
	if !ok {
		return nil, fmt.Errorf("%w: data key %x is wrapped by %s, which this store was not given (it has %s)", ErrKeyUnavailable, w.DataKey, w.KEK, strings.Join(k.ids, ", "))
	}
	secret, err := kp.Decrypt(ctx, w.Ciphertext)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %s refuses data key %x (the wrong key under that URL, or a damaged wrapped key)", ErrKeyUnavailable, w.KEK, w.DataKey)
	}
	if len(secret) != keySize {
		return nil, fmt.Errorf("%w: data key %x unwrapped by %s is %d bytes, want %d", ErrKeyUnavailable, w.DataKey, w.KEK, len(secret), keySize)
	}
	return newDataKey(w.DataKey, [keySize]byte(secret))
}

// Rewrap returns w wrapped under the current KEK, the same data key
// inside; w itself if it already is.
func (k *Keyring) Rewrap(ctx context.Context, w Wrapped) (Wrapped, error) {
	if w.KEK == k.Current() {
		return w, nil
	}
	dk, err := k.Unwrap(ctx, w)
	if err != nil {
		return Wrapped{}, err
	}
	return k.Wrap(ctx, dk)
}

// Wrapped is a data key encrypted by a KEK, with both ids.
type Wrapped struct {
	KEK        string
	DataKey    [idSize]byte
	Ciphertext []byte
}

// wrappedVersion is the first byte of an encoded Wrapped.
const wrappedVersion = 1

// maxWrapped bounds what DecodeWrapped accepts (a KMS ciphertext of 32
// bytes is a few hundred).
const maxWrapped = 4096

// Encode returns w as bytes for a store: version, KEK id, data key id,
// ciphertext, each length-prefixed where it varies.
func (w Wrapped) Encode() []byte {
	b := []byte{wrappedVersion, byte(len(w.KEK))}
	b = append(b, w.KEK...)
	b = append(b, w.DataKey[:]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(w.Ciphertext)))
	return append(b, w.Ciphertext...)
}

// DecodeWrapped parses what Encode wrote; driver.ErrCorrupt if it cannot.
func DecodeWrapped(b []byte) (Wrapped, error) {
	var w Wrapped
	if len(b) < 2 || b[0] != wrappedVersion || len(b) > maxWrapped {
		return w, corrupt("wrapped data key: bad header")
	}
	n := int(b[1])
	b = b[2:]
	if len(b) < n+idSize+2 {
		return w, corrupt("wrapped data key: truncated")
	}
	w.KEK = string(b[:n])
	copy(w.DataKey[:], b[n:n+idSize])
	b = b[n+idSize:]
	m := int(binary.BigEndian.Uint16(b))
	if len(b) != 2+m {
		return w, corrupt("wrapped data key: ciphertext length")
	}
	w.Ciphertext = append([]byte(nil), b[2:]...)
	return w, nil
}

// scrub is err's text without the keeper URL or any part of it that could
// be a secret (its host, path, query values and user information).
func scrub(err error, keeperURL string) string {
	s := strings.ReplaceAll(err.Error(), keeperURL, "<url>")
	if u, perr := url.Parse(keeperURL); perr == nil {
		parts := []string{u.Host, u.Path, u.RawQuery, u.User.String()}
		for _, vs := range u.Query() {
			parts = append(parts, vs...)
		}
		for _, p := range parts {
			if len(p) >= 4 {
				s = strings.ReplaceAll(s, p, "<redacted>")
			}
		}
	}
	return s
}
