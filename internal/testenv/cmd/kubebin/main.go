// Command kubebin builds the kube-apiserver and kube-controller-manager the
// crsplit tests run against, with progress lines, or says in one line where
// the cached ones are. `make kube` (a step of `make test`) runs it, so that a
// cold build is a visible step of its own rather than minutes of silence
// inside a test; the tests call the same code (testenv.KubeBinaries) and
// build on demand when this step has not run.
package main

import (
	"fmt"
	"os"

	"github.com/helmstore/helmstore/internal/testenv/kubebuild"
)

func main() {
	r, err := kubebuild.Binaries(kubebuild.Options{Progress: os.Stdout})
	if err != nil {
		fmt.Fprintf(os.Stderr, "kube: %v\n", err)
		os.Exit(1)
	}
	switch {
	case os.Getenv(kubebuild.BinDirEnv) != "":
		fmt.Printf("kube: using %s and %s in %s=%s\n", kubebuild.APIServer, kubebuild.ControllerManager, kubebuild.BinDirEnv, r.Dir)
	case !r.Built:
		fmt.Printf("kube: %s and %s %s already built in %s\n", kubebuild.APIServer, kubebuild.ControllerManager, r.Version, r.Dir)
	}
}
