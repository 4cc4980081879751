package testenv

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/helmstore/helmstore/internal/filelock"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// KubeBinDirEnv names a directory that already holds kube-apiserver and
// kube-controller-manager binaries; when set, nothing is built.
const KubeBinDirEnv = "HELMSTORE_KUBE_BIN_DIR"

// The Kubernetes commands the harness builds from tools/kube.
const (
	kubeAPIServer         = "kube-apiserver"
	kubeControllerManager = "kube-controller-manager"
)

// KubeBinaries returns a directory holding kube-apiserver and
// kube-controller-manager: the one in HELMSTORE_KUBE_BIN_DIR, else a cache
// directory ${XDG_CACHE_HOME:-$HOME/.cache}/helmstore/kube-<hash>/ keyed by
// the tools/kube module (go.mod, go.sum, tools.go), built there with
// `go build` on first use. A cold build takes several minutes on two cores;
// concurrent test processes wait for one build under a file lock.
func KubeBinaries() (string, error) {
	if dir := os.Getenv(KubeBinDirEnv); dir != "" {
		if !haveKubeBinaries(dir) {
			return "", fmt.Errorf("%s=%s does not hold %s and %s", KubeBinDirEnv, dir, kubeAPIServer, kubeControllerManager)
		}
		return dir, nil
	}
	tools, err := findToolsKube()
	if err != nil {
		return "", err
	}
	version, err := kubernetesVersion(filepath.Join(tools, "go.mod"))
	if err != nil {
		return "", err
	}
	ldflags := kubeLDFlags(version)
	key, err := hashFiles(ldflags, filepath.Join(tools, "go.mod"), filepath.Join(tools, "go.sum"), filepath.Join(tools, "tools.go"))
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the Kubernetes binaries (set %s): %w", KubeBinDirEnv, err)
	}
	root := filepath.Join(cache, "helmstore")
	dir := filepath.Join(root, "kube-"+key)
	if haveKubeBinaries(dir) {
		return dir, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	unlock, err := filelock.Lock(ctx, dir+".lock")
	if err != nil {
		return "", fmt.Errorf("waiting for another process building the Kubernetes binaries: %w", err)
	}
	defer unlock()
	if haveKubeBinaries(dir) { // built while we waited
		return dir, nil
	}
	tmp, err := os.MkdirTemp(root, "kube-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	goTool, err := findGo()
	if err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "testenv: building %s and %s %s from %s into %s (several minutes on a cold Go build cache)\n",
		kubeAPIServer, kubeControllerManager, version, tools, dir)
	start := time.Now()
	cmd := exec.CommandContext(ctx, goTool, "build", "-o", tmp+string(filepath.Separator), "-ldflags", ldflags,
		"k8s.io/kubernetes/cmd/"+kubeAPIServer, "k8s.io/kubernetes/cmd/"+kubeControllerManager)
	cmd.Dir = tools
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("building the Kubernetes binaries in %s: %v\n%s", tools, err, tail(out, 4000))
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", err
	}
	fmt.Fprintf(os.Stderr, "testenv: built the Kubernetes binaries in %s\n", time.Since(start).Round(time.Second))
	return dir, nil
}

func haveKubeBinaries(dir string) bool {
	for _, n := range []string{kubeAPIServer, kubeControllerManager} {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// kubeLDFlags stamps the version the API server reports (/version), which
// Helm reads for chart kubeVersion checks. Only the link step depends on it,
// so it does not cost a rebuild of the Go build cache.
func kubeLDFlags(version string) string {
	v := strings.TrimPrefix(version, "v")
	parts := strings.SplitN(v, ".", 3)
	major, minor := "1", "0"
	if len(parts) >= 2 {
		major, minor = parts[0], parts[1]
	}
	pkg := "k8s.io/component-base/version"
	return strings.Join([]string{
		"-X", pkg + ".gitVersion=" + version,
		"-X", pkg + ".gitMajor=" + major,
		"-X", pkg + ".gitMinor=" + minor,
		"-X", pkg + ".gitTreeState=clean",
	}, " ")
}

// kubernetesVersion reads the k8s.io/kubernetes requirement of go.mod.
func kubernetesVersion(gomod string) (string, error) {
	f, err := os.Open(gomod)
	if err != nil {
		return "", err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		for i := 0; i+1 < len(fields); i++ {
			if fields[i] == "k8s.io/kubernetes" && strings.HasPrefix(fields[i+1], "v") {
				return fields[i+1], nil
			}
		}
	}
	return "", fmt.Errorf("%s does not require k8s.io/kubernetes", gomod)
}

func hashFiles(salt string, paths ...string) (string, error) {
	h := sha256.New()
	h.Write([]byte(salt))
	h.Write([]byte(runtime.GOOS + "/" + runtime.GOARCH))
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "\x00%s\x00%d\x00", filepath.Base(p), len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

// findToolsKube returns the tools/kube directory of this repository: found
// from the working directory upwards (a test runs in its package's
// directory), else next to this source file.
func findToolsKube() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		starts = append(starts, filepath.Dir(file))
	}
	for _, dir := range starts {
		for {
			cand := filepath.Join(dir, "tools", "kube")
			if b, err := os.ReadFile(filepath.Join(cand, "go.mod")); err == nil && bytes.Contains(b, []byte("k8s.io/kubernetes")) {
				return cand, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", errors.New("cannot find the tools/kube module (run the tests from inside the helmstore repository, or set " + KubeBinDirEnv + ")")
}

func findGo() (string, error) {
	if p := filepath.Join(runtime.GOROOT(), "bin", "go"); runtime.GOROOT() != "" {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("the go command is needed to build kube-apiserver but is not on PATH")
	}
	return p, nil
}

// tail returns at most the last n bytes of b, as text.
func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
