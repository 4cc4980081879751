// Package kubebuild builds (once, into a cache directory) the real
// kube-apiserver and kube-controller-manager the crsplit tests run against,
// from the separate tools/kube module. It is used by kubeenv.Binaries
// (the tests build on demand) and by the command `make kube` runs
// (internal/testenv/cmd/kubebin), so that `make test` builds them as a
// visible step of its own. It depends on nothing heavy, so that command
// compiles in seconds.
package kubebuild

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/helmstore/helmstore/internal/filelock"
	"github.com/helmstore/helmstore/internal/testenv"
)

// BinDirEnv names a directory that already holds kube-apiserver and
// kube-controller-manager binaries; when set, nothing is built.
const BinDirEnv = "HELMSTORE_KUBE_BIN_DIR"

// The Kubernetes commands built from tools/kube.
const (
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
)

// ColdBuild is what a build from an empty Go build cache costs, for the
// messages that announce one.
const ColdBuild = "about 7-10 minutes on 2 cores, plus module downloads on a first run"

// Result says where the binaries are and whether this call built them.
type Result struct {
	Dir     string
	Version string // the k8s.io/kubernetes version, e.g. v1.34.3
	Built   bool   // false: found in HELMSTORE_KUBE_BIN_DIR or the cache
}

// Options tune Binaries' reporting.
type Options struct {
	// Progress receives a line when a build starts, lines every Tick while
	// it runs (or while another process's build is awaited), and one when
	// it ends. Nil: no progress lines.
	Progress io.Writer
	// Tick is the interval of "still building" lines; 0 means one minute.
	Tick time.Duration
}

// Binaries returns a directory holding kube-apiserver and
// kube-controller-manager: the one in HELMSTORE_KUBE_BIN_DIR, else a cache
// directory ${XDG_CACHE_HOME:-$HOME/.cache}/helmstore/kube-<hash>/ keyed by
// the tools/kube module (go.mod, go.sum, tools.go), built there with
// `go build` on first use. Concurrent processes wait for one build under a
// file lock. A failed build's error ends with the end of go build's output.
func Binaries(opts Options) (Result, error) {
	res, tools, ldflags, err := locate()
	if err != nil || os.Getenv(BinDirEnv) != "" || Have(res.Dir) {
		return res, err
	}
	tick := opts.Tick
	if tick <= 0 {
		tick = time.Minute
	}
	say := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, format+"\n", args...)
		}
	}
	dir, root, version := res.Dir, filepath.Dir(res.Dir), res.Version
	if err := os.MkdirAll(root, 0o755); err != nil {
		return Result{}, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	unlock, err := lockReporting(ctx, dir+".lock", tick, say)
	if err != nil {
		return Result{}, fmt.Errorf("waiting for another process building the Kubernetes binaries: %w", err)
	}
	defer unlock()
	if Have(dir) { // built while we waited
		return res, nil
	}
	// Under the lock, a build directory of this key is what a killed
	// build left behind.
	stale, _ := filepath.Glob(dir + ".build-*")
	for _, d := range stale {
		os.RemoveAll(d)
	}
	tmp, err := os.MkdirTemp(root, filepath.Base(dir)+".build-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(tmp)
	goTool, err := exec.LookPath("go")
	if err != nil {
		return Result{}, errors.New("the go command is needed to build kube-apiserver but is not on PATH")
	}
	say("building %s and %s %s from %s into %s: %s; much less with a warm Go build cache",
		APIServer, ControllerManager, version, tools, dir, ColdBuild)
	start := time.Now()
	// -v lists each package as it is compiled: the progress lines count them.
	cmd := exec.CommandContext(ctx, goTool, "build", "-v", "-o", tmp+string(filepath.Separator), "-ldflags", ldflags,
		"k8s.io/kubernetes/cmd/"+APIServer, "k8s.io/kubernetes/cmd/"+ControllerManager)
	cmd.Dir = tools
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	out := &buildOutput{}
	cmd.Stdout, cmd.Stderr = out, out
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return Result{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return Result{}, fmt.Errorf("building the Kubernetes binaries in %s (go build %s): %v\n%s",
					tools, strings.Join(cmd.Args[2:], " "), err, out.errors(6000))
			}
			if err := os.Rename(tmp, dir); err != nil {
				return Result{}, err
			}
			say("built %s and %s in %s", APIServer, ControllerManager, time.Since(start).Round(time.Second))
			res.Built = true
			return res, nil
		case <-t.C:
			mods, pkgs := out.counts()
			downloads := ""
			if mods > 0 {
				downloads = fmt.Sprintf("%d modules downloaded, ", mods)
			}
			say("still building (%d min; %s%d packages compiled so far)", int(time.Since(start).Minutes()), downloads, pkgs)
		}
	}
}

// Built reports whether Binaries would return at once: the binaries are in
// HELMSTORE_KUBE_BIN_DIR or already in the cache.
func Built() bool {
	res, _, _, err := locate()
	return err == nil && Have(res.Dir)
}

// locate returns where the binaries are or will be built, and how.
func locate() (res Result, tools, ldflags string, err error) {
	if dir := os.Getenv(BinDirEnv); dir != "" {
		if !Have(dir) {
			return Result{}, "", "", fmt.Errorf("%s=%s does not hold %s and %s", BinDirEnv, dir, APIServer, ControllerManager)
		}
		return Result{Dir: dir}, "", "", nil
	}
	tools, err = findToolsKube()
	if err != nil {
		return Result{}, "", "", err
	}
	version, err := kubernetesVersion(filepath.Join(tools, "go.mod"))
	if err != nil {
		return Result{}, "", "", err
	}
	ldflags = ldFlags(version)
	key, err := hashFiles(ldflags, filepath.Join(tools, "go.mod"), filepath.Join(tools, "go.sum"), filepath.Join(tools, "tools.go"))
	if err != nil {
		return Result{}, "", "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return Result{}, "", "", fmt.Errorf("no cache directory for the Kubernetes binaries (set %s): %w", BinDirEnv, err)
	}
	return Result{Dir: filepath.Join(cache, "helmstore", "kube-"+key), Version: version}, tools, ldflags, nil
}

// lockReporting takes the build lock, saying so when another process holds it.
func lockReporting(ctx context.Context, path string, tick time.Duration, say func(string, ...any)) (func(), error) {
	short, cancel := context.WithTimeout(ctx, time.Second)
	unlock, err := filelock.Lock(short, path)
	cancel()
	if err == nil {
		return unlock, nil
	}
	if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	say("another process is building the Kubernetes binaries (lock %s); waiting for it", path)
	start := time.Now()
	for {
		short, cancel := context.WithTimeout(ctx, tick)
		unlock, err := filelock.Lock(short, path)
		cancel()
		if err == nil {
			say("the other build ended after %s of waiting", time.Since(start).Round(time.Second))
			return unlock, nil
		}
		if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		say("still waiting for the other build (%d min)", int(time.Since(start).Minutes()))
	}
}

// buildOutput collects go build -v's output, counting downloaded modules
// and compiled packages.
type buildOutput struct {
	mu         sync.Mutex
	buf        bytes.Buffer
	mods, pkgs int
	partial    []byte
}

func (o *buildOutput) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.buf.Write(p)
	o.partial = append(o.partial, p...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		line := string(o.partial[:i])
		o.partial = o.partial[i+1:]
		switch {
		case strings.HasPrefix(line, "go: downloading "):
			o.mods++
		case isPackageLine(line):
			o.pkgs++
		}
	}
	return len(p), nil
}

func (o *buildOutput) counts() (int, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.mods, o.pkgs
}

// isPackageLine reports whether line is one of go build -v's package paths.
func isPackageLine(line string) bool {
	return line != "" && !strings.ContainsAny(line, " \t:#")
}

// errors returns the end (at most n bytes) of the output without the
// package list, which is what tells why a build failed.
func (o *buildOutput) errors(n int) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var keep []string
	s := bufio.NewScanner(bytes.NewReader(o.buf.Bytes()))
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		if !isPackageLine(s.Text()) {
			keep = append(keep, s.Text())
		}
	}
	return testenv.Tail([]byte(strings.Join(keep, "\n")), n)
}

// Have reports whether dir holds both binaries, executable.
func Have(dir string) bool {
	for _, n := range []string{APIServer, ControllerManager} {
		fi, err := os.Stat(filepath.Join(dir, n))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// ldFlags stamps the version the API server reports (/version), which
// Helm reads for chart kubeVersion checks. Only the link step depends on it,
// so it does not cost a rebuild of the Go build cache.
func ldFlags(version string) string {
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
// directory), else from this source file's directory upwards.
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
	return "", errors.New("cannot find the tools/kube module (run from inside the helmstore repository, or set " + BinDirEnv + ")")
}
