package drivertest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/encryption"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/envelope"
)

// Encryption at rest tried as an attacker would (RunAtRest): a store
// without the key writing into an encrypted namespace, a keyring record
// copied from another namespace, plaintext planted where releases are
// sealed, and the description a summary listing shows.

// raw is the backend under s's encryption: what a reader or writer of the
// store's data with the store's credentials (and no key) reaches.
func raw(t *testing.T, s helm3.Store) driver.Backend {
	t.Helper()
	h := engine.Of(s)
	if h == nil {
		t.Fatal("not a helmstore store")
	}
	return envelope.Under(h.Backend())
}

// checkDescription: the description (which a failed upgrade fills with
// the Kubernetes error, which may quote a value) is sealed: a summary
// listing with the key shows it, one without it does not show the secret.
func checkDescription(t *testing.T, a AtRest, s helm3.Store, secret string) {
	ctx := context.Background()
	p, err := s.Namespace("team-a").Summaries(ctx, helm3.SummaryQuery{})
	if err != nil || len(p.Summaries) != 1 || p.Summaries[0].Description != "Upgrade failed: password "+secret {
		t.Errorf("summaries with the key: %+v, %v; want app with its description opened", p.Summaries, err)
	}
	keyless := a.Again(t, s)
	defer keyless.Close()
	p, err = keyless.Namespace("team-a").Summaries(ctx, helm3.SummaryQuery{})
	if err != nil || len(p.Summaries) != 1 || strings.Contains(p.Summaries[0].Description, secret) {
		t.Errorf("summaries without the key: %+v, %v; want app, its description still sealed", p.Summaries, err)
	}
}

// checkKeylessWriter: a store opened without the key writes nothing into a
// namespace that is encrypted (it holds a keyring record), Create or
// Update, failing with ErrKeyUnavailable naming the key; it still writes a
// namespace that is not. The scan then still finds no secret.
func checkKeylessWriter(t *testing.T, a AtRest, s helm3.Store, key, secret string) {
	ctx := context.Background()
	before, err := s.Namespace("team-a").Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keyless := a.Again(t, s)
	defer keyless.Close()
	writes := map[string]func() error{
		"Create": func() error {
			return keyless.Namespace("team-a").Create(driver.MakeKey("app", 9), secretRelease("app", "team-a", 9, secret))
		},
		"Update": func() error {
			return keyless.Namespace("team-a").Update(driver.MakeKey("app", 3), secretRelease("app", "team-a", 3, secret))
		},
		"Create of a new release": func() error {
			return keyless.Namespace("team-a").Create(driver.MakeKey("other", 1), secretRelease("other", "team-a", 1, secret))
		},
	}
	for what, write := range writes {
		err := write()
		if !errors.Is(err, encryption.ErrKeyUnavailable) || !strings.Contains(err.Error(), envelope.KEKID(key)) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s without the key in an encrypted namespace: %v; want ErrKeyUnavailable naming %s", what, err, envelope.KEKID(key))
		}
	}
	after, err := s.Namespace("team-a").Stats(ctx)
	if err != nil || after.Releases != before.Releases || after.TotalParts() != before.TotalParts() || after.HeadBytes != before.HeadBytes {
		t.Errorf("the keyless writes stored something: stats %+v before, %+v after (%v)", before, after, err)
	}
	if a.Holds(t, s, []byte(secret)) {
		t.Error("after the keyless writes, the stored data holds the secret")
	}
	if r, err := s.Namespace("team-a").Get(driver.MakeKey("app", 3)); err != nil || r.Config["password"] != secret {
		t.Errorf("app.v3 after the refused keyless Update: %v", err)
	}
	if err := keyless.Namespace("plain").Create(driver.MakeKey("web", 1), secretRelease("web", "plain", 1, "public")); err != nil {
		t.Errorf("a keyless Create into a namespace that is not encrypted: %v", err)
	}
	if _, err := keyless.Namespace("plain").Delete(driver.MakeKey("web", 1)); err != nil {
		t.Error(err)
	}
}

// checkCopiedKeyring: with a key per namespace, sec-c's keyring record
// copied over sec-d's (a raw write with the store's credentials) is
// refused: a store with both keys writes nothing into sec-d under sec-c's
// data key (driver.ErrCorrupt naming the record), and a store given only
// sec-c's key reads nothing of sec-d. Both namespaces' releases written
// before still read with their keys.
func checkCopiedKeyring(t *testing.T, a AtRest, secret string) {
	ctx := context.Background()
	kc, kd := KeyURL(t), KeyURL(t)
	s := a.New(t, helm3.WithEncryptionKeys("sec-c="+kc, "sec-d="+kd))
	defer s.Close()
	for _, ns := range []string{"sec-c", "sec-d"} {
		if err := s.Namespace(ns).Create(driver.MakeKey("app", 1), secretRelease("app", ns, 1, secret)); err != nil {
			t.Fatal(err)
		}
	}
	b := raw(t, s)
	recs, err := b.Heads(ctx, driver.Query{Namespace: "sec-c", Key: codec.KeyringKey})
	if err != nil || len(recs) != 1 {
		t.Fatalf("sec-c's keyring record: %d, %v", len(recs), err)
	}
	copied := *recs[0]
	copied.Namespace, copied.CreatedAt = "sec-d", 0
	if err := b.Update(ctx, &copied, nil); err != nil {
		t.Fatalf("copying sec-c's keyring record over sec-d's: %v", err)
	}
	// Through the store that wrote both, and a new one with both keys.
	again := a.Again(t, s, helm3.WithEncryptionKeys("sec-c="+kc, "sec-d="+kd))
	defer again.Close()
	for i, w := range []helm3.Store{s, again} {
		err := w.Namespace("sec-d").Create(driver.MakeKey("app", 2+i), secretRelease("app", "sec-d", 2+i, secret))
		if !errors.Is(err, driver.ErrCorrupt) || !strings.Contains(err.Error(), "keyring record") {
			t.Errorf("store %d: a write to sec-d over sec-c's copied record: %v; want ErrCorrupt naming the keyring record", i, err)
		}
	}
	onlyC := a.Again(t, s, helm3.WithEncryptionKeys("sec-c="+kc))
	defer onlyC.Close()
	if rs, err := onlyC.Namespace("sec-d").List(func(*release.Release) bool { return true }); len(rs) != 0 {
		t.Errorf("sec-c's key alone lists %d releases of sec-d (%v)", len(rs), err)
	}
	for _, v := range []int{2, 3} {
		if r, err := onlyC.Namespace("sec-d").Get(driver.MakeKey("app", v)); err == nil {
			t.Errorf("sec-c's key alone reads sec-d's app.v%d: %v", v, r.Config)
		}
	}
	if r, err := again.Namespace("sec-d").Get(driver.MakeKey("app", 1)); err != nil || r.Config["password"] != secret {
		t.Errorf("sec-d's release written before the copy, with sec-d's key: %v", err)
	}
	if r, err := onlyC.Namespace("sec-c").Get(driver.MakeKey("app", 1)); err != nil || r.Config["password"] != secret {
		t.Errorf("sec-c's release with sec-c's key: %v", err)
	}
	if a.Holds(t, s, []byte(secret)) {
		t.Error("copied keyring record: the stored data holds the secret")
	}
}

// checkSeal: releases stored in plaintext before encryption was turned on
// (or by a store without the key) are refused by a store with the key
// (encryption.ErrNotSealed on Get; List skips them and logs why) until a
// Seal pass seals them in place: then they read whole with the key, the
// scan finds no secret, a store without the key is refused, the parts are
// what a store encrypted from the start holds, and a second pass seals
// nothing.
func checkSeal(t *testing.T, a AtRest, secret string) {
	ctx := context.Background()
	plain := a.New(t)
	defer plain.Close()
	for v := 1; v <= 3; v++ {
		if err := plain.Namespace("legacy").Create(driver.MakeKey("app", v), secretRelease("app", "legacy", v, secret)); err != nil {
			t.Fatal(err)
		}
	}
	if err := plain.Namespace("legacy").Update(driver.MakeKey("app", 1), secretRelease("app", "legacy", 1, secret)); err != nil {
		t.Fatal(err)
	}
	old, err := plain.Namespace("legacy").Query(map[string]string{"name": "app", "version": "1"})
	if err != nil || len(old) != 1 || old[0].Labels["modifiedAt"] == "" {
		t.Fatalf("app.v1 before sealing: %v, %v", old, err)
	}
	key := KeyURL(t)
	var mu sync.Mutex
	var logged []string
	keyed := a.Again(t, plain, helm3.WithEncryptionKeys(key), helm3.WithLog(func(f string, v ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(f, v...))
	}))
	defer keyed.Close()
	_, err = keyed.Namespace("legacy").Get(driver.MakeKey("app", 2))
	if !errors.Is(err, encryption.ErrNotSealed) || !errors.Is(err, driver.ErrCorrupt) || !strings.Contains(err.Error(), "helmstore seal") {
		t.Errorf("a plaintext release read with the key: %v; want encryption.ErrNotSealed", err)
	}
	if rs, err := keyed.Namespace("legacy").List(func(*release.Release) bool { return true }); err != nil || len(rs) != 0 {
		t.Errorf("List with the key of plaintext releases: %d, %v; want none (skipped)", len(rs), err)
	}
	mu.Lock()
	said := strings.Join(logged, "\n")
	mu.Unlock()
	if !strings.Contains(said, "helmstore seal") || !strings.Contains(said, "app.v2") {
		t.Errorf("List skipped plaintext releases without saying why: %q", said)
	}
	if _, err := encryption.Seal(ctx, plain.Namespace(""), nil); !errors.Is(err, encryption.ErrNotEncrypted) {
		t.Errorf("Seal through a store without keys: %v; want ErrNotEncrypted", err)
	}
	var seen []string
	res, err := encryption.Seal(ctx, keyed.Namespace(""), func(ns, key string, err error) {
		seen = append(seen, ns+"/"+key)
		if err != nil {
			t.Errorf("Seal: %s/%s: %v", ns, key, err)
		}
	})
	if err != nil || res.Releases != 3 || res.Sealed != 3 || res.Damaged != 0 || len(seen) != 3 {
		t.Fatalf("Seal: %+v, %v (%v); want 3 releases, 3 sealed", res, err, seen)
	}
	if a.Holds(t, plain, []byte(secret)) {
		t.Error("after Seal, the stored data holds the secret")
	}
	got, err := keyed.Namespace("legacy").Query(map[string]string{"name": "app", "version": "1"})
	if err != nil || len(got) != 1 || got[0].Config["password"] != secret || got[0].Labels["modifiedAt"] != old[0].Labels["modifiedAt"] || got[0].Labels["createdAt"] != old[0].Labels["createdAt"] {
		t.Errorf("app.v1 sealed: %v; want it whole, times as they were (%v)", err, old[0].Labels)
	}
	for v := 2; v <= 3; v++ {
		if r, err := keyed.Namespace("legacy").Get(driver.MakeKey("app", v)); err != nil || r.Config["password"] != secret || r.Info.Description != "Upgrade failed: password "+secret {
			t.Errorf("app.v%d sealed: %v", v, err)
		}
	}
	st, err := keyed.Namespace("legacy").Stats(ctx)
	if err != nil || st.Releases != 3 || st.Parts["chart"] != 1 || st.TotalParts() != 5 {
		t.Errorf("after Seal: %d releases, parts %v (%v); want 3, and 1 chart, 1 manifest, 3 values", st.Releases, st.Parts, err)
	}
	if res, err := encryption.Seal(ctx, keyed.Namespace("legacy"), nil); err != nil || res.Releases != 3 || res.Sealed != 0 {
		t.Errorf("Seal again: %+v, %v; want 3 releases, none sealed", res, err)
	}
	// A store without the key, opened now (plain itself took legacy for
	// unencrypted a moment ago, and asks again after a few seconds).
	keyless := a.Again(t, plain)
	defer keyless.Close()
	if err := keyless.Namespace("legacy").Create(driver.MakeKey("app", 4), secretRelease("app", "legacy", 4, secret)); !errors.Is(err, encryption.ErrKeyUnavailable) {
		t.Errorf("a keyless write after Seal: %v; want ErrKeyUnavailable", err)
	}
}
