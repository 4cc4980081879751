package envelope_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"gocloud.dev/secrets/localsecrets"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/envelope"
)

// keyURL is a new random local KEK's URL (the key is in the URL).
func keyURL(t *testing.T) string {
	t.Helper()
	k, err := localsecrets.NewRandomKey()
	if err != nil {
		t.Fatal(err)
	}
	return "base64key://" + base64.URLEncoding.EncodeToString(k[:])
}

func keyring(t *testing.T, urls ...string) *envelope.Keyring {
	t.Helper()
	k, err := envelope.OpenKeyring(context.Background(), urls...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.Close() })
	return k
}

func TestSealOpen(t *testing.T) {
	dk, err := envelope.NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	plain := []byte("password: hunter2\n")
	ad := []byte("ns/sh.helm.release.v1.a.v1")
	a, b := dk.Seal(plain, ad), dk.Seal(plain, ad)
	if bytes.Equal(a, b) {
		t.Error("two seals of one plaintext are equal: the nonce is not fresh")
	}
	if bytes.Contains(a, plain[:8]) {
		t.Error("the sealed frame holds the plaintext")
	}
	if len(a) != len(plain)+envelope.Overhead || !envelope.Sealed(a) {
		t.Errorf("frame of %d bytes (sealed %v), want %d", len(a), envelope.Sealed(a), len(plain)+envelope.Overhead)
	}
	got, err := dk.Open(a, ad)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}
	// Every byte changed, and the frame moved elsewhere, is corrupt.
	for i := range a {
		c := bytes.Clone(a)
		c[i] ^= 0x40
		if _, err := dk.Open(c, ad); !errors.Is(err, driver.ErrCorrupt) && !errors.Is(err, envelope.ErrKeyMismatch) {
			t.Fatalf("byte %d changed: %v, want ErrCorrupt or ErrKeyMismatch", i, err)
		}
	}
	if _, err := dk.Open(a, []byte("other/sh.helm.release.v1.a.v1")); !errors.Is(err, driver.ErrCorrupt) {
		t.Errorf("opened with another place's additional data: %v, want ErrCorrupt", err)
	}
	if _, err := dk.Open(a[:envelope.Overhead-1], ad); !errors.Is(err, driver.ErrCorrupt) {
		t.Errorf("truncated: %v, want ErrCorrupt", err)
	}
	other, _ := envelope.NewDataKey()
	if _, err := other.Open(a, ad); !errors.Is(err, envelope.ErrKeyMismatch) || !strings.Contains(err.Error(), dk.ID()) {
		t.Errorf("another key: %v, want ErrKeyMismatch naming %s", err, dk.ID())
	}
}

func TestAddress(t *testing.T) {
	a, _ := envelope.NewDataKey()
	b, _ := envelope.NewDataKey()
	d := driver.Sum([]byte("values"))
	if first, again := a.Address(d), a.Address(d); first != again {
		t.Error("one key gives one digest two addresses: parts would not be shared")
	}
	if a.Address(d) == b.Address(d) || a.Address(d) == d {
		t.Error("an address is the digest, or the same under two keys: a reader could tell shared values apart")
	}
	if a.Address(d) == a.Address(driver.Sum([]byte("other"))) {
		t.Error("two digests have one address")
	}
}

func TestWrapRotateRewrap(t *testing.T) {
	ctx := context.Background()
	oldURL, newURL := keyURL(t), keyURL(t)
	old := keyring(t, oldURL)
	dk, _ := envelope.NewDataKey()
	w, err := old.Wrap(ctx, "ns", dk)
	if err != nil {
		t.Fatal(err)
	}
	if w.KEK != envelope.KEKID(oldURL) || bytes.Contains(w.Ciphertext, []byte(dk.ID())) {
		t.Errorf("wrapped under %s, want %s", w.KEK, envelope.KEKID(oldURL))
	}
	enc := w.Encode()
	w2, err := envelope.DecodeWrapped(enc)
	if err != nil || w2.KEK != w.KEK || w2.DataKey != w.DataKey || !bytes.Equal(w2.Ciphertext, w.Ciphertext) {
		t.Fatalf("DecodeWrapped(Encode) = %+v, %v", w2, err)
	}
	for i := range enc {
		if _, err := envelope.DecodeWrapped(enc[:i]); !errors.Is(err, driver.ErrCorrupt) {
			t.Fatalf("%d of %d bytes decoded: %v", i, len(enc), err)
		}
	}

	// Rotation: the new KEK in front; the old still unwraps.
	both := keyring(t, newURL, oldURL)
	frame := dk.Seal([]byte("secret"), nil)
	back, err := both.Unwrap(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	if p, err := back.Open(frame, nil); err != nil || string(p) != "secret" {
		t.Fatalf("the unwrapped key opens %q, %v", p, err)
	}
	re, err := both.Rewrap(ctx, "ns", w)
	if err != nil || re.KEK != envelope.KEKID(newURL) || re.DataKey != w.DataKey {
		t.Fatalf("Rewrap = %+v, %v: want the same data key under %s", re, err, envelope.KEKID(newURL))
	}
	if again, err := both.Rewrap(ctx, "ns", re); err != nil || !bytes.Equal(again.Ciphertext, re.Ciphertext) {
		t.Errorf("rewrapping a key already under the current KEK rewrote it: %v", err)
	}
	// After the rewrap the old KEK can go.
	only := keyring(t, newURL)
	if k, err := only.Unwrap(ctx, re); err != nil || k.Address(driver.Digest{}) != dk.Address(driver.Digest{}) {
		t.Errorf("the rewrapped key under the new KEK alone: %v", err)
	}

	// Without the KEK, or with another key under its id: a clear error.
	_, err = only.Unwrap(ctx, w)
	if !errors.Is(err, envelope.ErrKeyUnavailable) || !strings.Contains(err.Error(), w.KEK) {
		t.Errorf("unwrap without its KEK: %v, want ErrKeyUnavailable naming %s", err, w.KEK)
	}
	forged := re
	forged.KEK = w.KEK
	if _, err := old.Unwrap(ctx, forged); !errors.Is(err, envelope.ErrKeyUnavailable) || !strings.Contains(err.Error(), w.KEK) {
		t.Errorf("the wrong KEK: %v, want ErrKeyUnavailable naming %s", err, w.KEK)
	}
}

func TestErrorsHoldNoKey(t *testing.T) {
	secret := "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I="
	for _, u := range []string{"base64key://" + secret[:20], "nosuchscheme://" + secret} {
		_, err := envelope.OpenKeyring(context.Background(), u)
		if err == nil {
			t.Fatalf("%s opened", envelope.KEKID(u))
		}
		if strings.Contains(err.Error(), secret[:12]) || !strings.Contains(err.Error(), envelope.KEKID(u)) {
			t.Errorf("error %q holds the key, or does not name %s", err, envelope.KEKID(u))
		}
	}
}
