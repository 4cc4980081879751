package envelope

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"gocloud.dev/secrets"

	"github.com/helmstore/helmstore/driver"
)

// ErrKeyUnavailable is returned when a wrapped data key cannot be
// unwrapped: its KEK is not in the Keyring, or the KEK refuses it (the
// wrong key, or a damaged wrapped key). The message names the KEK's id.
var ErrKeyUnavailable = driver.ErrKeyUnavailable

// A Keyring wraps data keys under a current KEK and unwraps them under any
// of its KEKs. A KEK may be given for one namespace ("ns=URL"): it is
// current for that namespace, whose data keys no other KEK then wraps, so
// a store given only that namespace's KEK reads that namespace alone.
// Safe for concurrent use.
type Keyring struct {
	ids     []string          // every KEK, in the order given
	current string            // the KEK of namespaces without their own ("": none)
	byNS    map[string]string // a namespace's own current KEK
	keepers map[string]*secrets.Keeper
}

// OpenKeyring opens the KEKs named by entries: gocloud.dev/secrets keeper
// URLs (the keeper's package must be imported to register its scheme),
// each alone or after a namespace and "=" ("team-a=awskms://..."). The
// first URL alone is current for every namespace without a KEK of its
// own, the first of a namespace current for it; the others only unwrap.
// Errors never hold a URL.
func OpenKeyring(ctx context.Context, entries ...string) (*Keyring, error) {
	if len(entries) == 0 {
		return nil, errors.New("encryption: no key-encryption key URL")
	}
	k := &Keyring{keepers: make(map[string]*secrets.Keeper, len(entries)), byNS: map[string]string{}}
	for _, e := range entries {
		ns, u := splitNamespace(e)
		id := KEKID(u)
		switch _, seen := k.byNS[ns]; {
		case ns == "" && k.current == "":
			k.current = id
		case ns != "" && !seen:
			k.byNS[ns] = id
		}
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

// splitNamespace splits "ns=URL" into ns and URL; a URL alone has no
// namespace (a namespace holds no ':', a URL has one before any '=').
func splitNamespace(entry string) (ns, u string) {
	before, after, ok := strings.Cut(entry, "=")
	if !ok || strings.Contains(before, ":") {
		return "", entry
	}
	return before, after
}

// KEKID is the id of the KEK a keeper URL names: "kek-" and 12 hex digits
// of the URL's SHA-256. It reveals nothing of a key held in the URL.
func KEKID(keeperURL string) string {
	sum := sha256.Sum256([]byte(keeperURL))
	return "kek-" + hex.EncodeToString(sum[:6])
}

// Current is the id of the KEK that wraps new data keys of namespace ns;
// ErrKeyUnavailable if there is none (only other namespaces have KEKs).
func (k *Keyring) Current(ns string) (string, error) {
	if id, ok := k.byNS[ns]; ok {
		return id, nil
	}
	if k.current == "" {
		return "", fmt.Errorf("%w: no key-encryption key for namespace %q (this store has keys for %s only)", ErrKeyUnavailable, ns, strings.Join(slices.Sorted(maps.Keys(k.byNS)), ", "))
	}
	return k.current, nil
}

// Allowed reports whether the KEK kek may wrap data keys of namespace ns:
// a KEK given for one namespace ("ns=URL") wraps that namespace's alone,
// so a data key of ns wrapped by another namespace's KEK (a keyring record
// or head copied from there, or written under it by an attacker holding
// that KEK) is never used for ns.
func (k *Keyring) Allowed(ns, kek string) bool {
	if k.byNS[ns] == kek {
		return true
	}
	for _, id := range k.byNS {
		if id == kek {
			return false
		}
	}
	return true
}

// Close closes the keepers.
func (k *Keyring) Close() error {
	var errs []error
	for _, kp := range k.keepers {
		errs = append(errs, kp.Close())
	}
	return errors.Join(errs...)
}

// Wrap encrypts dk, a data key of namespace ns, under ns's current KEK.
func (k *Keyring) Wrap(ctx context.Context, ns string, dk *DataKey) (Wrapped, error) {
	id, err := k.Current(ns)
	if err != nil {
		return Wrapped{}, err
	}
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

// Rewrap returns w, a data key of namespace ns, wrapped under ns's
// current KEK, the same data key inside; w itself if it already is.
func (k *Keyring) Rewrap(ctx context.Context, ns string, w Wrapped) (Wrapped, error) {
	if cur, err := k.Current(ns); err != nil || w.KEK == cur {
		return w, err
	}
	dk, err := k.Unwrap(ctx, w)
	if err != nil {
		return Wrapped{}, err
	}
	return k.Wrap(ctx, ns, dk)
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
