package kubeenv

import (
	"os"

	"github.com/helmstore/helmstore/internal/testing/testenv/kubebuild"
)

// BinDirEnv names a directory that already holds kube-apiserver and
// kube-controller-manager binaries; when set, they are not built.
const BinDirEnv = kubebuild.BinDirEnv

// EtcdEnv names an etcd binary to use; when set, etcd is not built.
const EtcdEnv = kubebuild.EtcdEnv

// The Kubernetes commands the harness builds from tools/kube.
const (
	kubeAPIServer         = kubebuild.APIServer
	kubeControllerManager = kubebuild.ControllerManager
)

// Binaries returns where etcd (HELMSTORE_ETCD, else built from tools/etcd),
// kube-apiserver and kube-controller-manager (in HELMSTORE_KUBE_BIN_DIR,
// else built from tools/kube) are: the builds go into cache directories
// ${XDG_CACHE_HOME:-$HOME/.cache}/helmstore/{etcd,kube}-<hash>/ keyed by
// each module, on first use (see kubebuild.Binaries). `make test` builds
// them first, as a step of its own (`make kube`), so a cold build (several
// minutes) is visible; without that step the tests build on demand,
// reporting progress on stderr. Concurrent test processes wait for one
// build under a file lock.
func Binaries() (kubebuild.Result, error) {
	return kubebuild.Binaries(kubebuild.Options{Progress: prefixWriter{"testenv: "}})
}

func haveKubeBinaries(dir string) bool { return kubebuild.Have(dir) }

// prefixWriter writes each line to stderr after a prefix.
type prefixWriter struct{ prefix string }

func (w prefixWriter) Write(p []byte) (int, error) {
	os.Stderr.Write(append([]byte(w.prefix), p...))
	return len(p), nil
}
