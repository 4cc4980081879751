package kubeenv

import (
	"os"

	"github.com/helmstore/helmstore/internal/testenv/kubebuild"
)

// BinDirEnv names a directory that already holds kube-apiserver and
// kube-controller-manager binaries; when set, nothing is built.
const BinDirEnv = kubebuild.BinDirEnv

// The Kubernetes commands the harness builds from tools/kube.
const (
	kubeAPIServer         = kubebuild.APIServer
	kubeControllerManager = kubebuild.ControllerManager
)

// Binaries returns a directory holding kube-apiserver and
// kube-controller-manager: the one in HELMSTORE_KUBE_BIN_DIR, else a cache
// directory ${XDG_CACHE_HOME:-$HOME/.cache}/helmstore/kube-<hash>/ keyed by
// the tools/kube module, built there on first use (see kubebuild.Binaries).
// `make test` builds them first, as a step of its own (`make kube`), so a
// cold build (several minutes) is visible; without that step the tests
// build on demand, reporting progress on stderr. Concurrent test processes
// wait for one build under a file lock.
func Binaries() (string, error) {
	r, err := kubebuild.Binaries(kubebuild.Options{Progress: prefixWriter{"testenv: "}})
	return r.Dir, err
}

func haveKubeBinaries(dir string) bool { return kubebuild.Have(dir) }

// prefixWriter writes each line to stderr after a prefix.
type prefixWriter struct{ prefix string }

func (w prefixWriter) Write(p []byte) (int, error) {
	os.Stderr.Write(append([]byte(w.prefix), p...))
	return len(p), nil
}
