package envelope

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	"gocloud.dev/secrets/localsecrets"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/memstore"
)

func newKeyURL(t *testing.T) string {
	t.Helper()
	k, err := localsecrets.NewRandomKey()
	if err != nil {
		t.Fatal(err)
	}
	return "base64key://" + base64.URLEncoding.EncodeToString(k[:])
}

// sealingOver returns a sealing backend over the memstore space name, with
// a Keyring of entries.
func sealingOver(t *testing.T, space string, entries ...string) *sealing {
	t.Helper()
	ctx := context.Background()
	b, err := memstore.Open(ctx, &driver.Config{Name: memstore.Name, ConnectionString: space})
	if err != nil {
		t.Fatal(err)
	}
	ring, err := OpenKeyring(ctx, entries...)
	if err != nil {
		t.Fatal(err)
	}
	s := Wrap(b, ring).(*sealing)
	t.Cleanup(func() { s.Close() })
	return s
}

// Whoever holds one namespace's KEK and may write the store cannot make
// a record another namespace's writers accept: a record for sec-d that
// sec-c's KEK wraps, bound to sec-d by its own data key (so the binding
// checks out), is refused by a writer given both namespaces' keys.
func TestForgedRecordRefused(t *testing.T) {
	ctx := context.Background()
	kc, kd := newKeyURL(t), newKeyURL(t)
	space := t.Name()
	victim := sealingOver(t, space, "sec-c="+kc, "sec-d="+kd)
	attacker := sealingOver(t, space, "sec-c="+kc)
	dk, err := NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	w, err := attacker.ring.Wrap(ctx, "sec-c", dk)
	if err != nil {
		t.Fatal(err)
	}
	if err := attacker.writeRecord(ctx, "sec-d", dk, w.Encode(), nil); err != nil {
		t.Fatal(err)
	}
	_, _, err = victim.writeKey(ctx, "sec-d")
	if !errors.Is(err, driver.ErrCorrupt) || !strings.Contains(err.Error(), KEKID(kc)) {
		t.Errorf("writeKey over a record wrapped by sec-c's key: %v; want ErrCorrupt naming %s", err, KEKID(kc))
	}
	// The attacker's own store takes it (its Keyring gives sec-c's key
	// to sec-c alone, but knows nothing of sec-d's): it is the victim's
	// Keyring that must refuse.
	if _, _, err := victim.writeKey(ctx, "sec-c"); err != nil {
		t.Errorf("writeKey in sec-c: %v", err)
	}
}

// A record written before records were bound to their namespace (no
// frame) is used, and bound by the first writer: read again, it is not
// legacy and still holds the same data key.
func TestLegacyRecordBound(t *testing.T) {
	ctx := context.Background()
	s := sealingOver(t, t.Name(), newKeyURL(t))
	dk, err := NewDataKey()
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.ring.Wrap(ctx, "team-a", dk)
	if err != nil {
		t.Fatal(err)
	}
	legacy := &driver.Head{Namespace: "team-a", Key: keyringKey, Name: keyringName, Version: keyringVersion,
		Status: keyringStatus, Owner: driver.Owner}
	legacy.Seal(wrappedBody(w.Encode()))
	if err := s.b.Create(ctx, legacy, nil); err != nil {
		t.Fatal(err)
	}
	if rec, err := s.readRecord(ctx, "team-a"); err != nil || !rec.legacy {
		t.Fatalf("the legacy record: %+v, %v", rec, err)
	}
	got, _, err := s.writeKey(ctx, "team-a")
	if err != nil || got.id != dk.id {
		t.Fatalf("writeKey over a legacy record: %v, %v; want data key %s", got, err, dk.ID())
	}
	rec, err := s.readRecord(ctx, "team-a")
	if err != nil || rec.legacy || rec.key.id != dk.id {
		t.Errorf("the record after a write: %+v, %v; want it bound, data key %s", rec, err, dk.ID())
	}
	// Copied to another namespace, the bound record does not open there.
	copied := *rec.head
	copied.Namespace = "team-b"
	if err := s.b.Create(ctx, &copied, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.readRecord(ctx, "team-b"); !errors.Is(err, driver.ErrCorrupt) {
		t.Errorf("the bound record copied to team-b: %v; want ErrCorrupt", err)
	}
}
