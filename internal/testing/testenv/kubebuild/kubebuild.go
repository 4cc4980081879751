// Package kubebuild builds (once, into cache directories) what the crsplit
// tests' API server runs: etcd, from the separate tools/etcd module, and
// kube-apiserver and kube-controller-manager, from tools/kube. It is used by
// kubeenv (the tests build on demand) and by the command `make kube` runs
// (internal/testing/testenv/cmd/kubebin), so that `make test` builds them as a
// visible step of its own. It depends on nothing heavy, so that command
// compiles in seconds.
package kubebuild

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
)

// BinDirEnv names a directory that already holds kube-apiserver and
// kube-controller-manager binaries; when set, they are not built.
const BinDirEnv = "HELMSTORE_KUBE_BIN_DIR"

// EtcdEnv names an etcd binary to use; when set, etcd is not built.
const EtcdEnv = "HELMSTORE_ETCD"

// The commands built: Etcd from tools/etcd, the Kubernetes ones from
// tools/kube.
const (
	Etcd              = "etcd"
	APIServer         = "kube-apiserver"
	ControllerManager = "kube-controller-manager"
)

// ColdBuild is what building them all from an empty Go build cache costs,
// for the messages that announce it.
const ColdBuild = "about 8-11 minutes on 2 cores, plus module downloads on a first run"

// Result says where the binaries are and whether this call built them.
type Result struct {
	// Dir holds kube-apiserver and kube-controller-manager.
	Dir string
	// Version is the k8s.io/kubernetes version built, e.g. v1.34.3; empty
	// when Dir is HELMSTORE_KUBE_BIN_DIR.
	Version string
	// Built: this call built Dir's binaries (false: found in
	// HELMSTORE_KUBE_BIN_DIR or the cache).
	Built bool

	// Etcd is the etcd binary.
	Etcd string
	// EtcdVersion is the go.etcd.io/etcd/server/v3 version built, e.g.
	// v3.6.16; empty when Etcd is HELMSTORE_ETCD.
	EtcdVersion string
	// EtcdBuilt: this call built Etcd.
	EtcdBuilt bool
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

// Binaries returns where etcd, kube-apiserver and kube-controller-manager
// are: etcd is HELMSTORE_ETCD, else built from tools/etcd into the cache
// directory ${XDG_CACHE_HOME:-$HOME/.cache}/helmstore/etcd-<hash>/ keyed by
// that module (go.mod, go.sum, tools.go); the Kubernetes commands are in
// HELMSTORE_KUBE_BIN_DIR, else built from tools/kube into
// .../helmstore/kube-<hash>/ the same way. Each is built with `go build` on
// first use; concurrent processes wait for one build under a file lock. A
// failed build's error ends with the end of go build's output.
func Binaries(opts Options) (Result, error) {
	var res Result
	if p := os.Getenv(EtcdEnv); p != "" {
		if !executable(p) {
			return Result{}, fmt.Errorf("%s=%s is not an executable file: set it to an etcd binary's path, or unset it to build etcd from tools/etcd", EtcdEnv, p)
		}
		res.Etcd = p
	} else {
		b, err := etcdTool.locate()
		if err == nil {
			res.EtcdBuilt, err = b.ensure(opts)
		}
		if err != nil {
			return Result{}, err
		}
		res.Etcd, res.EtcdVersion = filepath.Join(b.dir, Etcd), b.version
	}
	if dir := os.Getenv(BinDirEnv); dir != "" {
		if !Have(dir) {
			return Result{}, fmt.Errorf("%s=%s does not hold %s and %s: set it to a directory that does, or unset it to build them from tools/kube", BinDirEnv, dir, APIServer, ControllerManager)
		}
		res.Dir = dir
		return res, nil
	}
	b, err := kubeTool.locate()
	if err == nil {
		res.Built, err = b.ensure(opts)
	}
	if err != nil {
		return Result{}, err
	}
	res.Dir, res.Version = b.dir, b.version
	return res, nil
}

// Built reports whether Binaries would return at once: etcd and the
// Kubernetes binaries are named by the environment or already in the cache.
func Built() bool {
	if p := os.Getenv(EtcdEnv); p == "" {
		if b, err := etcdTool.locate(); err != nil || !b.have() {
			return false
		}
	}
	if dir := os.Getenv(BinDirEnv); dir != "" {
		return Have(dir)
	}
	b, err := kubeTool.locate()
	return err == nil && b.have()
}

// Have reports whether dir holds kube-apiserver and kube-controller-manager,
// executable.
func Have(dir string) bool {
	return executable(filepath.Join(dir, APIServer)) && executable(filepath.Join(dir, ControllerManager))
}

func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}
