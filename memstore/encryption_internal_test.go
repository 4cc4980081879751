package memstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
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
	"github.com/helmstore/helmstore/internal/engine"
)

// newKeyURL is a random local key-encryption key's URL.
func newKeyURL(t *testing.T) string {
	k, err := localsecrets.NewRandomKey()
	if err != nil {
		t.Fatal(err)
	}
	return "base64key://" + base64.URLEncoding.EncodeToString(k[:])
}

// secretRelease is revision v of a release whose values, manifest, notes
// and hook hold secret.
func secretRelease(name string, v int, secret string) *release.Release {
	return &release.Release{
		Name: name, Namespace: "team-a", Version: v,
		Chart:    &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"}, Templates: []*chart.File{{Name: "templates/x.yaml", Data: []byte("kind: Secret")}}},
		Config:   map[string]interface{}{"password": secret, "revision": v},
		Manifest: "kind: Secret\ndata:\n  password: " + secret + "\n",
		Hooks:    []*release.Hook{{Name: "init", Manifest: "token: " + secret}},
		Info:     &release.Info{Status: release.StatusDeployed, Notes: "the password is " + secret},
	}
}

// holds reports whether anything stored in s's space holds secret.
func holds(s *space, secret []byte) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, recs := range s.heads {
		for _, r := range recs {
			if bytes.Contains(r.head.Body, secret) {
				return true
			}
		}
	}
	for _, parts := range s.parts {
		for _, p := range parts {
			if bytes.Contains(p.frame, secret) {
				return true
			}
		}
	}
	return false
}

// TestEncryptedAtRest stores releases whose values, manifest, notes and
// hooks hold a secret, with encryption off and on, and scans everything
// the space holds: the secret is there without encryption (so the scan
// can find it), and not with; the releases read back equal; a values-only
// upgrade adds one values part (deltas and sharing still work); a store
// without the key, or with another, fails naming the key's id.
func TestEncryptedAtRest(t *testing.T) {
	ctx := context.Background()
	raw := make([]byte, 24)
	rand.Read(raw)
	secret := hex.EncodeToString(raw)
	url := newKeyURL(t)
	var plainParts map[string]int
	for _, encrypted := range []bool{false, true} {
		var opts []helm3.Option
		if encrypted {
			opts = append(opts, helm3.WithEncryptionKeys(url))
		}
		name := "at-rest-" + map[bool]string{false: "plain", true: "sealed"}[encrypted]
		s, err := helm3.Open(ctx, Name, name, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		st := s.Namespace("team-a")
		for v := 1; v <= 3; v++ {
			if err := st.Create(driver.MakeKey("app", v), secretRelease("app", v, secret)); err != nil {
				t.Fatal(err)
			}
		}
		sp := under(engine.Of(s).Backend()).(*memBackend).s
		if got := holds(sp, []byte(secret)); got == encrypted {
			t.Errorf("encrypted %v: the stored bytes hold the secret: %v", encrypted, got)
		}
		got, err := st.Get(driver.MakeKey("app", 2))
		if err != nil || got.Config["password"] != secret || !strings.Contains(got.Info.Notes, secret) || got.Hooks[0].Manifest != "token: "+secret {
			t.Fatalf("encrypted %v: Get = %v, %v", encrypted, got, err)
		}
		stats, err := st.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		// The chart shared, the same parts whatever the sealing.
		if stats.Parts["chart"] != 1 || stats.TotalParts() != 5 {
			t.Errorf("encrypted %v: parts stored %v, want 1 chart, 1 manifest, 3 values", encrypted, stats.Parts)
		}
		if !encrypted {
			plainParts = stats.Parts
			continue
		}
		if !maps.Equal(stats.Parts, plainParts) {
			t.Errorf("parts stored encrypted %v, plain %v", stats.Parts, plainParts)
		}
		// Another process with the key reads them; one without, or with another, cannot.
		again, err := helm3.Open(ctx, Name, name, helm3.WithEncryptionKeys(newKeyURL(t), url))
		if err != nil {
			t.Fatal(err)
		}
		if r, err := again.Namespace("team-a").Get(driver.MakeKey("app", 3)); err != nil || r.Config["password"] != secret {
			t.Errorf("reopened with the key behind a new one: %v", err)
		}
		again.Close()
		wrong, err := helm3.Open(ctx, Name, name, helm3.WithEncryptionKeys(newKeyURL(t)))
		if err != nil {
			t.Fatal(err)
		}
		_, err = wrong.Namespace("team-a").Get(driver.MakeKey("app", 3))
		if !errors.Is(err, encryption.ErrKeyUnavailable) || errors.Is(err, helmdriver.ErrReleaseNotFound) || !strings.Contains(err.Error(), "kek-") {
			t.Errorf("Get without the key: %v, want ErrKeyUnavailable naming the key, not not-found", err)
		}
		if _, err := wrong.Namespace("team-a").List(func(*release.Release) bool { return true }); !errors.Is(err, encryption.ErrKeyUnavailable) {
			t.Errorf("List without the key: %v, want ErrKeyUnavailable", err)
		}
		wrong.Close()
	}
}
