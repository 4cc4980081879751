package kubeenv

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubebuild"
)

// TestKubeBinaries finds (or builds) etcd and the Kubernetes binaries.
// `make test` builds them before the tests, as a step of its own (`make
// kube`).
func TestKubeBinaries(t *testing.T) {
	if d, ok := t.Deadline(); ok && time.Until(d) < 20*time.Minute && !kubebuild.Built() {
		// go test's default 10-minute timeout would end a cold build
		// (and every other test of the package) with a panic.
		testenv.Unavailable(t, "a kube-apiserver binary", errors.New("not built yet, and a cold build ("+kubebuild.ColdBuild+") may not fit in this test's -timeout: run `make kube` first (or go test -timeout 30m)"))
	}
	bins, err := Binaries()
	if err != nil {
		testenv.Unavailable(t, "a kube-apiserver binary", err)
	}
	if !haveKubeBinaries(bins.Dir) {
		t.Fatalf("Binaries returned %s, which lacks the binaries", bins.Dir)
	}
	if os.Getenv(BinDirEnv) == "" && !strings.HasPrefix(filepath.Base(bins.Dir), "kube-") {
		t.Fatalf("cache directory %s is not keyed by the tools/kube module", bins.Dir)
	}
	if os.Getenv(EtcdEnv) != "" {
		return
	}
	if !strings.HasPrefix(filepath.Base(filepath.Dir(bins.Etcd)), "etcd-") {
		t.Fatalf("etcd %s is not in a cache directory keyed by the tools/etcd module", bins.Etcd)
	}
	// The version etcd reports is the one tools/etcd requires.
	out, err := exec.Command(bins.Etcd, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("%s --version: %v\n%s", bins.Etcd, err, out)
	}
	if want := "etcd Version: " + strings.TrimPrefix(bins.EtcdVersion, "v") + "\n"; !strings.Contains(string(out), want) {
		t.Fatalf("%s --version says:\n%s\nwant a line %q", bins.Etcd, out, want)
	}
}

func TestKubeServer(t *testing.T) {
	k, err := Start()
	if err != nil {
		testenv.Unavailable(t, "kube-apiserver", err)
	}
	defer func() {
		k.Stop()
		if _, err := os.Stat(k.Dir()); !os.IsNotExist(err) {
			t.Errorf("Stop left %s behind", k.Dir())
		}
	}()
	rc, err := rest.HTTPClientFor(k.Config(Admin))
	if err != nil {
		t.Fatal(err)
	}
	get := func(user, path string) int {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", k.URL+path, nil)
		req.Header.Set("Authorization", "Bearer "+k.tokens[user])
		resp, err := rc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if path == "/version" {
			var v struct{ GitVersion string }
			json.NewDecoder(resp.Body).Decode(&v)
			if !strings.HasPrefix(v.GitVersion, "v1.") {
				t.Errorf("server reports version %q, want the tools/kube version", v.GitVersion)
			}
		}
		return resp.StatusCode
	}
	if c := get(Admin, "/api/v1/namespaces/kube-system"); c != 200 {
		t.Fatalf("admin: status %d", c)
	}
	if c := get("alice", "/api/v1/namespaces/kube-system"); c != http.StatusForbidden {
		t.Fatalf("alice reading a namespace: status %d, want 403 (RBAC must be on)", c)
	}
	get(Admin, "/version")
	// The kubeconfig names every user.
	g := k.Getter("bob", "x")
	cfg, err := g.ToRESTConfig()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.BearerToken != k.tokens["bob"] {
		t.Fatal("kubeconfig context bob does not use bob's token")
	}
}
