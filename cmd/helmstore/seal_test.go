package main_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
)

// helmstore seal encrypts, in place, the releases a SQLite store held in
// plaintext before encryption was turned on: before it, verify with the key
// names them as stored in plaintext; after it, every revision reads with
// the key, none without it, and a second seal finds nothing to do.
func TestSeal(t *testing.T) {
	db := filepath.Join(t.TempDir(), "helm.db")
	s, err := helm3.Open(context.Background(), "sqlite", db)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		for v := 1; v <= 2; v++ {
			r := &release.Release{Name: "app", Namespace: ns, Version: v, Config: map[string]any{"password": "hunter2"},
				Chart: &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"}},
				Info:  &release.Info{Status: release.StatusDeployed}}
			if err := s.Namespace(ns).Create(fmt.Sprintf("sh.helm.release.v1.app.v%d", v), r); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.Close()
	key := drivertest.KeyURL(t)
	run := func(keys string, args ...string) (string, error) {
		cmd := exec.Command(bin, append(args, "--driver", "sqlite", "--connection", db)...)
		cmd.Env = append(os.Environ(), "HELM_DRIVER=", "HELM_DRIVER_ENCRYPTION_KEYS="+keys)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(key, "verify", "-A"); err == nil || !strings.Contains(out, "helmstore seal") || !strings.Contains(out, "4 unreadable") {
		t.Errorf("verify with the key before seal: %v; want 4 revisions named as stored in plaintext\n%s", err, out)
	}
	if out, err := run("", "seal", "-A"); err == nil || !strings.Contains(out, "without encryption keys") {
		t.Errorf("seal without a key: %v\n%s", err, out)
	}
	if out, err := run(key, "seal", "-A"); err != nil || !strings.Contains(out, "team-b/sh.helm.release.v1.app.v2: sealed") || !strings.HasSuffix(out, "4 revisions, 4 sealed, 0 unreadable\n") {
		t.Errorf("seal: %v\n%s", err, out)
	}
	if out, err := run(key, "seal", "-A"); err != nil || out != "4 revisions, 0 sealed, 0 unreadable\n" {
		t.Errorf("seal again: %v\n%s", err, out)
	}
	if out, err := run(key, "verify", "-A"); err != nil || !strings.Contains(out, "4 revisions read, 0 unreadable") {
		t.Errorf("verify with the key after seal: %v\n%s", err, out)
	}
	if out, err := run("", "verify", "-A"); err == nil || strings.Count(out, "encryption key unavailable") != 4 {
		t.Errorf("verify without the key after seal: %v\n%s", err, out)
	}
}
