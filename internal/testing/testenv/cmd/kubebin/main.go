// Command kubebin builds etcd, kube-apiserver and kube-controller-manager,
// which the crsplit tests run, with progress lines, or says in one line
// each where the cached ones are. `make kube` and `make test` run it, so
// that a cold build is a visible step of its own rather than minutes of
// silence inside a test; the tests call the same code (kubeenv.Binaries)
// and build on demand when this step has not run.
//
// With -optional (as in `make test`) a failed build is reported and the
// command exits 0, so the other tests still run (the crsplit tests then try
// again and skip if they cannot build), unless HELMSTORE_REQUIRE_SERVICES=1.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/helmstore/helmstore/internal/testing/testenv/kubebuild"
)

func main() {
	optional := flag.Bool("optional", false, "on failure, say so and exit 0 unless HELMSTORE_REQUIRE_SERVICES=1")
	flag.Parse()
	r, err := kubebuild.Binaries(kubebuild.Options{Progress: os.Stdout})
	if err != nil {
		fmt.Fprintf(os.Stderr, "kube: %v\n", err)
		if *optional && os.Getenv("HELMSTORE_REQUIRE_SERVICES") != "1" {
			fmt.Fprintln(os.Stderr, "kube: going on without them: the crsplit tests will try to build them again and skip if they cannot (set HELMSTORE_REQUIRE_SERVICES=1 to stop here instead)")
			return
		}
		os.Exit(1)
	}
	switch {
	case os.Getenv(kubebuild.EtcdEnv) != "":
		fmt.Printf("kube: using etcd %s=%s\n", kubebuild.EtcdEnv, r.Etcd)
	case !r.EtcdBuilt:
		fmt.Printf("kube: etcd %s already built: %s\n", r.EtcdVersion, r.Etcd)
	}
	switch {
	case os.Getenv(kubebuild.BinDirEnv) != "":
		fmt.Printf("kube: using %s and %s in %s=%s\n", kubebuild.APIServer, kubebuild.ControllerManager, kubebuild.BinDirEnv, r.Dir)
	case !r.Built:
		fmt.Printf("kube: %s and %s %s already built in %s\n", kubebuild.APIServer, kubebuild.ControllerManager, r.Version, r.Dir)
	}
}
