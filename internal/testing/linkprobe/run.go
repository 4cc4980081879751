// Package linkprobe is the body of the small programs beside it, each of
// which imports one set of SQL dialects and nothing else: TestDialectsLinkAlone
// lists what each links, and the binary sizes in docs/benchmarks.md are theirs
// (go build ./internal/testing/linkprobe/...).
package linkprobe

import (
	"context"
	"fmt"
	"os"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
)

// Main opens the store named by the first argument at the connection string
// given as the second, and prints how many releases it holds: what a tool
// that picks its store at run time does.
func Main() {
	if len(os.Args) != 3 {
		fmt.Fprintf(os.Stderr, "usage: %s driver connection-string (registered: %v)\n", os.Args[0], driver.Drivers())
		os.Exit(2)
	}
	store, err := helm3.Open(context.Background(), os.Args[1], os.Args[2])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer store.Close()
	rs, err := store.Namespace("").List(func(*release.Release) bool { return true })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(len(rs), "releases")
}
