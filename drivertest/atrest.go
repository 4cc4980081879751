package drivertest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"strings"
	"testing"

	"gocloud.dev/secrets/localsecrets"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/encryption"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/envelope"
)

// AtRest is what RunAtRest needs of a backend: stores over fresh data and
// over the same data again, and a scan of everything the data holds.
type AtRest struct {
	// New opens a store over new, empty data, with opts.
	New func(t *testing.T, opts ...helm3.Option) helm3.Store
	// Again opens another store over the data of s, with opts.
	Again func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store
	// Holds reports whether any stored byte string of s's data (a row's
	// column, a hash's field, an object's content) contains secret.
	Holds func(t *testing.T, s helm3.Store, secret []byte) bool
}

// KeyURL returns the URL of a new random local key-encryption key
// (gocloud.dev/secrets/localsecrets: the key is in the URL).
func KeyURL(t testing.TB) string {
	k, err := localsecrets.NewRandomKey()
	if err != nil {
		t.Fatal(err)
	}
	return "base64key://" + base64.URLEncoding.EncodeToString(k[:])
}

// RunAtRest checks encryption at rest (package encryption) on a backend:
// releases whose values, manifest, notes and hooks hold a random secret
// are stored with encryption off and on, and the raw data is scanned: the
// secret is found without encryption (so the scan can find it) and not
// with it; the releases read back whole; the same parts are stored either
// way (the chart once, values-only upgrades one values part each); a store
// given the key behind a new one reads them; one without the key fails
// Get and List with encryption.ErrKeyUnavailable naming the key's id,
// never "not found".
func RunAtRest(t *testing.T, a AtRest) {
	ctx := context.Background()
	raw := make([]byte, 24)
	rand.Read(raw)
	secret := hex.EncodeToString(raw)
	key := KeyURL(t)
	var plainParts map[string]int
	for _, encrypted := range []bool{false, true} {
		var opts []helm3.Option
		if encrypted {
			opts = append(opts, helm3.WithEncryptionKeys(key))
		}
		s := a.New(t, opts...)
		defer s.Close()
		st := s.Namespace("team-a")
		for v := 1; v <= 3; v++ {
			if err := st.Create(driver.MakeKey("app", v), secretRelease("app", "team-a", v, secret)); err != nil {
				t.Fatal(err)
			}
		}
		if got := a.Holds(t, s, []byte(secret)); got == encrypted {
			t.Errorf("encrypted %v: the stored data holds the secret: %v", encrypted, got)
		}
		got, err := st.Get(driver.MakeKey("app", 2))
		if err != nil || got.Config["password"] != secret || !strings.Contains(got.Info.Notes, secret) || got.Hooks[0].Manifest != "token: "+secret {
			t.Fatalf("encrypted %v: Get = %v, %v", encrypted, got, err)
		}
		stats, err := st.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Releases != 3 || stats.Parts["chart"] != 1 || stats.TotalParts() != 5 {
			t.Errorf("encrypted %v: %d releases, parts %v: want 3, and 1 chart, 1 manifest, 3 values", encrypted, stats.Releases, stats.Parts)
		}
		if !encrypted {
			plainParts = stats.Parts
			continue
		}
		if !maps.Equal(stats.Parts, plainParts) {
			t.Errorf("parts stored encrypted %v, plain %v", stats.Parts, plainParts)
		}
		again := a.Again(t, s, helm3.WithEncryptionKeys(KeyURL(t), key))
		if r, err := again.Namespace("team-a").Get(driver.MakeKey("app", 3)); err != nil || r.Config["password"] != secret {
			t.Errorf("another store with the key behind a new one: %v", err)
		}
		again.Close()
		// Another key, and no encryption at all.
		for _, opts := range [][]helm3.Option{{helm3.WithEncryptionKeys(KeyURL(t))}, {helm3.WithEncryptionKeys()}} {
			wrong := a.Again(t, s, opts...)
			_, err = wrong.Namespace("team-a").Get(driver.MakeKey("app", 3))
			if !errors.Is(err, encryption.ErrKeyUnavailable) || errors.Is(err, helmdriver.ErrReleaseNotFound) || !strings.Contains(err.Error(), envelope.KEKID(key)) {
				t.Errorf("Get without the key (%d key URLs): %v, want ErrKeyUnavailable naming %s, not not-found", len(opts), err, envelope.KEKID(key))
			}
			if _, err := wrong.Namespace("team-a").List(func(*release.Release) bool { return true }); !errors.Is(err, encryption.ErrKeyUnavailable) {
				t.Errorf("List without the key: %v, want ErrKeyUnavailable", err)
			}
			wrong.Close()
		}
		checkDescription(t, a, s, secret)
		checkKeylessWriter(t, a, s, key, secret)
		checkRewrap(t, a, s, key, secret)
	}
	checkNamespaceKeys(t, a, secret)
	checkCopiedKeyring(t, a, secret)
	checkSeal(t, a, secret)
}

// checkNamespaceKeys stores releases of two namespaces, each under a
// key-encryption key of its own ("ns=URL"): a store given one namespace's
// key reads and writes that namespace, and fails with ErrKeyUnavailable
// (naming the other key, never "not found") in the other.
func checkNamespaceKeys(t *testing.T, a AtRest, secret string) {
	ka, kb := KeyURL(t), KeyURL(t)
	s := a.New(t, helm3.WithEncryptionKeys("team-a="+ka, "team-b="+kb))
	defer s.Close()
	if err := s.Namespace("team-a").Create(driver.MakeKey("app", 1), secretRelease("app", "team-a", 1, secret)); err != nil {
		t.Fatal(err)
	}
	if err := s.Namespace("team-b").Create(driver.MakeKey("db", 1), secretRelease("db", "team-b", 1, secret)); err != nil {
		t.Fatal(err)
	}
	if a.Holds(t, s, []byte(secret)) {
		t.Error("keys per namespace: the stored data holds the secret")
	}
	onlyA := a.Again(t, s, helm3.WithEncryptionKeys("team-a="+ka))
	defer onlyA.Close()
	if r, err := onlyA.Namespace("team-a").Get(driver.MakeKey("app", 1)); err != nil || r.Config["password"] != secret {
		t.Errorf("team-a's release with team-a's key: %v", err)
	}
	if err := onlyA.Namespace("team-a").Create(driver.MakeKey("app", 2), secretRelease("app", "team-a", 2, secret)); err != nil {
		t.Errorf("a write to team-a with team-a's key: %v", err)
	}
	_, err := onlyA.Namespace("team-b").Get(driver.MakeKey("db", 1))
	if !errors.Is(err, encryption.ErrKeyUnavailable) || errors.Is(err, helmdriver.ErrReleaseNotFound) || !strings.Contains(err.Error(), envelope.KEKID(kb)) {
		t.Errorf("team-b's release with team-a's key alone: %v; want ErrKeyUnavailable naming %s", err, envelope.KEKID(kb))
	}
	if err := onlyA.Namespace("team-b").Create(driver.MakeKey("x", 1), secretRelease("x", "team-b", 1, secret)); !errors.Is(err, encryption.ErrKeyUnavailable) {
		t.Errorf("a write to team-b with team-a's key alone: %v; want ErrKeyUnavailable", err)
	}
}

// checkRewrap rotates s's key (key) to a new one and rewraps: a pass
// cancelled after its first namespace, then a rerun that does the rest
// and a third that finds nothing to do; then a store given the new key
// alone reads every release and writes.
func checkRewrap(t *testing.T, a AtRest, s helm3.Store, key, secret string) {
	ctx := context.Background()
	if err := s.Namespace("team-b").Create(driver.MakeKey("db", 1), secretRelease("db", "team-b", 1, secret)); err != nil {
		t.Fatal(err)
	}
	if _, err := encryption.Rewrap(ctx, s, nil); err != nil {
		t.Fatalf("Rewrap with nothing to do: %v", err)
	}
	next := KeyURL(t)
	rot := a.Again(t, s, helm3.WithEncryptionKeys(next, key))
	defer rot.Close()
	cctx, cancel := context.WithCancel(ctx)
	res, err := encryption.Rewrap(cctx, rot.Namespace(""), func(string, bool) { cancel() })
	if !errors.Is(err, context.Canceled) || res.Rewrapped != 1 {
		t.Errorf("Rewrap cancelled after its first namespace: %+v, %v; want 1 rewrapped, context.Canceled", res, err)
	}
	if res, err := encryption.Rewrap(ctx, rot.Namespace(""), nil); err != nil || res.Namespaces != 2 || res.Rewrapped != 1 {
		t.Errorf("Rewrap rerun: %+v, %v; want 2 namespaces, 1 rewrapped", res, err)
	}
	if res, err := encryption.Rewrap(ctx, rot.Namespace(""), nil); err != nil || res.Namespaces != 2 || res.Rewrapped != 0 {
		t.Errorf("Rewrap once done: %+v, %v; want 2 namespaces, none rewrapped", res, err)
	}
	only := a.Again(t, s, helm3.WithEncryptionKeys(next))
	defer only.Close()
	for ns, key := range map[string]string{"team-a": driver.MakeKey("app", 1), "team-b": driver.MakeKey("db", 1)} {
		if r, err := only.Namespace(ns).Get(key); err != nil || r.Config["password"] != secret {
			t.Errorf("%s/%s with the new key alone after the rewrap: %v", ns, key, err)
		}
	}
	if rs, err := only.Namespace("").List(func(*release.Release) bool { return true }); err != nil || len(rs) != 4 {
		t.Errorf("List with the new key alone: %d releases, %v; want 4", len(rs), err)
	}
	if err := only.Namespace("team-a").Create(driver.MakeKey("app", 4), secretRelease("app", "team-a", 4, secret)); err != nil {
		t.Errorf("Create with the new key alone: %v", err)
	}
	if _, err := encryption.Rewrap(ctx, a.Again(t, s), nil); !errors.Is(err, encryption.ErrNotEncrypted) {
		t.Errorf("Rewrap of a store without keys: %v; want ErrNotEncrypted", err)
	}
}

// secretRelease is revision v of release name in team-a whose values,
// manifest, notes and hook hold secret.
func secretRelease(name, ns string, v int, secret string) *release.Release {
	return &release.Release{
		Name: name, Namespace: ns, Version: v,
		Chart:    &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"}, Templates: []*chart.File{{Name: "templates/x.yaml", Data: []byte("kind: Secret")}}},
		Config:   map[string]interface{}{"password": secret, "revision": v},
		Manifest: "kind: Secret\ndata:\n  password: " + secret + "\n",
		Hooks:    []*release.Hook{{Name: "init", Manifest: "token: " + secret}},
		Info:     &release.Info{Status: release.StatusDeployed, Notes: "the password is " + secret, Description: "Upgrade failed: password " + secret},
	}
}

// JSONHolds reports whether a key or string of doc, a JSON document (an
// item or object a backend stores), contains secret as it is or
// base64-decoded (how encoding/json stores []byte): for AtRest.Holds.
func JSONHolds(t testing.TB, doc []byte, secret []byte) bool {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		t.Fatalf("a stored document that is not JSON: %v", err)
	}
	return jsonHolds(v, secret)
}

// jsonHolds is JSONHolds on a decoded document.
func jsonHolds(v any, secret []byte) bool {
	str := func(s string) bool {
		if bytes.Contains([]byte(s), secret) {
			return true
		}
		d, err := base64.StdEncoding.DecodeString(s)
		return err == nil && bytes.Contains(d, secret)
	}
	switch v := v.(type) {
	case string:
		return str(v)
	case []any:
		for _, e := range v {
			if jsonHolds(e, secret) {
				return true
			}
		}
	case map[string]any:
		for k, e := range v {
			if str(k) || jsonHolds(e, secret) {
				return true
			}
		}
	}
	return false
}
