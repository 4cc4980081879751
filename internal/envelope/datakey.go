package envelope

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/helmstore/helmstore/driver"
)

const (
	keySize   = 32 // a data key's secret
	idSize    = 8  // a data key's id
	nonceSize = 12 // AES-GCM's standard nonce
)

// Magic is the first byte of a sealed frame. No plaintext frame of the
// codec begins with it, so a reader tells the two apart.
const Magic = 0xE5

// Overhead is how many bytes Seal adds to a plaintext.
const Overhead = 1 + idSize + nonceSize + 16

// ErrKeyMismatch is returned by Open for a frame sealed by another data key
// than the one given; the message names both.
var ErrKeyMismatch = fmt.Errorf("%w: sealed by another data key", ErrKeyUnavailable)

// ErrNotSealed is the error (driver.ErrCorrupt) for a release a store that
// encrypts finds stored in plaintext: written by a store without the key
// (an old tool, a forgotten HELM_DRIVER_ENCRYPTION_KEYS) or before
// encryption was turned on. It is refused, as anything a reader of the raw
// store could have planted: Get fails with it, List and Query skip it and
// log it, Delete removes it; encryption.Seal (helmstore seal) seals such
// releases in place.
var ErrNotSealed = fmt.Errorf("%w: the release is stored in plaintext where releases are encrypted at rest (written without the key, or before encryption was turned on): seal it with helmstore seal (encryption.Seal), or delete it", driver.ErrCorrupt)

// A DataKey seals and addresses one namespace's data. Safe for concurrent
// use.
type DataKey struct {
	id     [idSize]byte
	secret [keySize]byte
	aead   cipher.AEAD
	mac    []byte // the address key, derived from secret
}

// NewDataKey makes a random data key with a random id.
func NewDataKey() (*DataKey, error) {
	var id [idSize]byte
	var secret [keySize]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	if _, err := rand.Read(secret[:]); err != nil {
		return nil, err
	}
	return newDataKey(id, secret)
}

// newDataKey derives a data key's cipher and address key from its secret
// (HKDF-SHA-256, one label each).
func newDataKey(id [idSize]byte, secret [keySize]byte) (*DataKey, error) {
	enc, err := hkdf.Key(sha256.New, secret[:], id[:], "helmstore seal v1", keySize)
	if err != nil {
		return nil, err
	}
	mac, err := hkdf.Key(sha256.New, secret[:], id[:], "helmstore address v1", keySize)
	if err != nil {
		return nil, err
	}
	block, err := aes.NewCipher(enc)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &DataKey{id: id, secret: secret, aead: aead, mac: mac}, nil
}

// ID is the data key's id in hex, as errors name it.
func (k *DataKey) ID() string { return hex.EncodeToString(k.id[:]) }

// String names the key by id alone.
func (k *DataKey) String() string { return "data key " + k.ID() }

// Address is where a part of digest d is stored under this key: the
// HMAC-SHA-256 of d. The same digest has the same address under one key,
// unrelated ones under others.
func (k *DataKey) Address(d driver.Digest) driver.Digest {
	m := hmac.New(sha256.New, k.mac)
	m.Write(d[:])
	return driver.Digest(m.Sum(nil))
}

// Seal encrypts plain with a fresh nonce, bound to ad (which Open must be
// given again): Magic, the key's id, the nonce, the ciphertext and tag.
func (k *DataKey) Seal(plain, ad []byte) []byte {
	out := make([]byte, 1+idSize+nonceSize, Overhead+len(plain))
	out[0] = Magic
	copy(out[1:], k.id[:])
	nonce := out[1+idSize:]
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand.Read does not fail (Go 1.24+)
	}
	return k.aead.Seal(out, nonce, plain, k.additional(ad))
}

// Open decrypts a frame Seal made with this key and ad; driver.ErrCorrupt
// if the frame or ad were changed, ErrKeyMismatch if another key sealed
// it.
func (k *DataKey) Open(frame, ad []byte) ([]byte, error) {
	id, err := FrameKey(frame)
	if err != nil {
		return nil, err
	}
	if id != k.id {
		return nil, fmt.Errorf("%w: frame sealed by data key %x, this is %s", ErrKeyMismatch, id, k.ID())
	}
	nonce := frame[1+idSize : 1+idSize+nonceSize]
	plain, err := k.aead.Open(nil, nonce, frame[1+idSize+nonceSize:], k.additional(ad))
	if err != nil {
		return nil, corrupt("sealed frame does not open under " + k.String() + " (changed, or moved from elsewhere)")
	}
	return plain, nil
}

// additional is the AEAD's additional data: the key's id and ad.
func (k *DataKey) additional(ad []byte) []byte {
	return append(bytes.Clone(k.id[:]), ad...)
}

// FrameKey returns the id of the data key that sealed frame;
// driver.ErrCorrupt if frame is not a sealed frame.
func FrameKey(frame []byte) ([idSize]byte, error) {
	var id [idSize]byte
	if !Sealed(frame) || len(frame) < Overhead {
		return id, corrupt("not a sealed frame")
	}
	copy(id[:], frame[1:])
	return id, nil
}

// Sealed reports whether frame begins as a sealed frame does.
func Sealed(frame []byte) bool { return len(frame) > 0 && frame[0] == Magic }

// corrupt is driver.ErrCorrupt with a reason.
func corrupt(why string) error { return fmt.Errorf("%w: %s", driver.ErrCorrupt, why) }
