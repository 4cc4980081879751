// Package helmbin builds, once per version into a cache directory, the real
// helm command lines that tests compare helmstore with or install its plugin
// into: Helm 3 from the tools/helm3 module and Helm 4 from tools/helm4, each
// pinned by its module (a separate module, so that the library's go.mod
// never depends on Helm's command packages).
package helmbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/helmstore/helmstore/internal/filelock"
)

// Helm returns the path of the helm binary of Helm major (3 or 4), built
// from tools/helm<major> into ${XDG_CACHE_HOME:-$HOME/.cache}/helmstore/
// helm<major>-<hash of the module's go.sum>/ on first use (a minute or
// two on 2 cores with a warm module cache). Concurrent test processes wait
// for one build under a file lock. A failed build fails t.
func Helm(t testing.TB, major int) string {
	t.Helper()
	path, err := build(major)
	if err != nil {
		t.Fatalf("building helm %d: %v", major, err)
	}
	return path
}

func build(major int) (string, error) {
	mod, err := toolsDir(major)
	if err != nil {
		return "", err
	}
	sum, err := os.ReadFile(filepath.Join(mod, "go.sum"))
	if err != nil {
		return "", err
	}
	h := sha256.Sum256(sum)
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "helmstore", fmt.Sprintf("helm%d-%s", major, hex.EncodeToString(h[:6])))
	bin := filepath.Join(dir, "helm")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	unlock, err := filelock.Lock(ctx, dir+".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // built by another process while this one waited
	}
	fmt.Fprintf(os.Stderr, "testenv: building helm %d from %s (a minute or two on 2 cores)\n", major, mod)
	tmp := bin + ".tmp"
	cmd := exec.CommandContext(ctx, "go", "build", "-o", tmp, fmt.Sprintf("helm.sh/helm/v%d/cmd/helm", major))
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v\n%s", err, out)
	}
	return bin, os.Rename(tmp, bin)
}

// toolsDir is tools/helm<major> of this repository.
func toolsDir(major int) (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", fmt.Errorf("no source path")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "tools", fmt.Sprintf("helm%d", major))
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return "", err
	}
	return dir, nil
}
