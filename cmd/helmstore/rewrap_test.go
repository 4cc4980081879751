package main_test

import (
	"bufio"
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
	_ "github.com/helmstore/helmstore/encryption"
	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/sql/sqlite"
)

// helmstore rewrap moves an encrypted SQLite store's data keys to the new
// key of HELM_DRIVER_ENCRYPTION_KEYS: killed (SIGKILL) after its first
// namespace, a rerun does the rest, and a third finds nothing to do; the
// new key alone then reads every release (verify, and a store).
func TestRewrap(t *testing.T) {
	const namespaces = 300
	db := filepath.Join(t.TempDir(), "helm.db")
	old, next := drivertest.KeyURL(t), drivertest.KeyURL(t)
	s, err := helm3.Open(context.Background(), "sqlite", db, helm3.WithEncryptionKeys(old))
	if err != nil {
		t.Fatal(err)
	}
	for i := range namespaces {
		ns := fmt.Sprintf("team-%03d", i)
		r := &release.Release{Name: "app", Namespace: ns, Version: 1, Config: map[string]any{"password": "x"},
			Chart: &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "app", Version: "1.0.0"}},
			Info:  &release.Info{Status: release.StatusDeployed}}
		if err := s.Namespace(ns).Create("sh.helm.release.v1.app.v1", r); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	run := func(keys string, args ...string) (string, error) {
		cmd := exec.Command(bin, append(args, "--driver", "sqlite", "--connection", db)...)
		cmd.Env = append(os.Environ(), "HELM_DRIVER=", "HELM_DRIVER_ENCRYPTION_KEYS="+keys)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(next, "verify", "-A"); err == nil {
		t.Fatalf("verify with the new key alone before the rewrap succeeded:\n%s", out)
	}
	// Killed once it has said it rewrapped a namespace.
	cmd := exec.Command(bin, "rewrap", "-A", "--driver", "sqlite", "--connection", db)
	cmd.Env = append(os.Environ(), "HELM_DRIVER=", "HELM_DRIVER_ENCRYPTION_KEYS="+next+","+old)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	cmd.Process.Kill()
	cmd.Wait()
	if err != nil || !strings.HasSuffix(line, ": rewrapped\n") {
		t.Fatalf("rewrap's first line: %q, %v", line, err)
	}
	out, err := run(next+","+old, "rewrap", "-A")
	var total, rewrapped int
	if _, serr := fmt.Sscanf(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:], "%d namespaces, %d rewrapped", &total, &rewrapped); err != nil || serr != nil ||
		total != namespaces || rewrapped == 0 || rewrapped == namespaces {
		t.Fatalf("rewrap after a kill: %v (%d namespaces, %d rewrapped; want %d, some but not all)\n%s", err, total, rewrapped, namespaces, out)
	}
	t.Logf("rewrap after a kill: %d of %d namespaces left to rewrap", rewrapped, total)
	if out, err := run(next+","+old, "rewrap", "-A"); err != nil || !strings.Contains(out, fmt.Sprintf("%d namespaces, 0 rewrapped", namespaces)) {
		t.Errorf("rewrap again: %v\n%s", err, out)
	}
	if out, err := run(next, "verify", "-A"); err != nil || !strings.Contains(out, fmt.Sprintf("%d revisions read, 0 unreadable", namespaces)) {
		t.Errorf("verify with the new key alone after the rewrap: %v\n%s", err, out)
	}
	s, err = helm3.Open(context.Background(), "sqlite", db, helm3.WithEncryptionKeys(next))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r, err := s.Namespace("team-123").Get("sh.helm.release.v1.app.v1"); err != nil || r.Config["password"] != "x" {
		t.Errorf("Get with the new key alone: %v", err)
	}
}
