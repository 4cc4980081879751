package driver

import (
	"bytes"
	"errors"
	"testing"
)

// A head naming bases is sealed over them; one without is sealed as heads
// were before bases existed.
func TestSealCoversBases(t *testing.T) {
	t.Parallel()
	frame := []byte(`{"name":"a"}`)
	c, v, m, b := Sum([]byte("c")), Sum([]byte("v")), Sum([]byte("m")), Sum([]byte("b"))
	h := &Head{Key: "k", Chart: c, Values: v, Manifest: m, ManifestBase: b}
	h.Seal(frame)
	if inner, err := h.Unseal(); err != nil || !bytes.Equal(inner, frame) {
		t.Fatalf("Unseal = %q, %v", inner, err)
	}
	plain := &Head{Key: "k", Chart: c, Values: v, Manifest: m}
	plain.Seal(frame)
	if bytes.Equal(plain.Body, h.Body) {
		t.Fatal("a base changes nothing in the seal")
	}
	for name, edit := range map[string]func(*Head){
		"base dropped":     func(x *Head) { x.ManifestBase = Digest{} },
		"base moved":       func(x *Head) { x.ManifestBase, x.ValuesBase = Digest{}, b },
		"base changed":     func(x *Head) { x.ManifestBase = c },
		"manifest is base": func(x *Head) { x.Manifest = b },
	} {
		x := *h
		edit(&x)
		if err := x.Verify(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}

func TestSealedHead(t *testing.T) {
	t.Parallel()
	frame := []byte(`{"name":"a"}`)
	c, v, m := Sum([]byte("c")), Sum([]byte("v")), Sum([]byte("m"))
	h := Head{Key: "k1", Chart: c, Values: v, Manifest: m}
	h.Seal(frame)
	if inner, err := h.Unseal(); err != nil || !bytes.Equal(inner, frame) {
		t.Fatalf("Unseal = %q, %v", inner, err)
	}
	for name, edit := range map[string]func(*Head){
		"other key":    func(x *Head) { x.Key = "k2" },
		"other values": func(x *Head) { x.Values = m },
		"no manifest":  func(x *Head) { x.Manifest = Digest{} },
		"unsealed":     func(x *Head) { x.Body = frame },
		"flipped": func(x *Head) {
			x.Body = bytes.Clone(x.Body)
			x.Body[len(x.Body)-1] ^= 1
		},
		"truncated": func(x *Head) { x.Body = x.Body[:20] },
		"empty":     func(x *Head) { x.Body = nil },
	} {
		x := h
		edit(&x)
		if err := x.Verify(); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", name, err)
		}
	}
}
