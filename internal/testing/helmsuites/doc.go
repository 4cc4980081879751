// Package helmsuites runs Helm's own test suites against helmstore's
// stores: the tests of Helm's pkg/action and pkg/storage, of Helm 3
// (helm.sh/helm/v3, through package helm3) and Helm 4 (helm.sh/helm/v4,
// through package helm4), at the versions go.mod requires, from the module
// cache, each with its fixture's driver.NewMemory() swapped for a new
// helmstore store (memstore, sqlite and, where a PostgreSQL server is
// found, postgres), and once more on Helm's Secrets driver over a fake
// clientset, the control.
//
// Nothing of Helm's is copied into this repository. At test time,
// TestHelmSuites writes a go build overlay (go help build, -overlay) into
// a temporary directory that
//   - replaces each test file of Helm's package that calls
//     X(driver.NewMemory()) with a copy where the call is
//     X(helmstoreDriver(t, driver.NewMemory())),
//   - adds to the package a file made from fixture.tmpl that defines
//     helmstoreDriver: the store named by HELMSTORE_SUITE_STORE, new for
//     each call, closed when the test ends, and
//   - hides the files of helmstore's packages that import Helm's pkg/action
//     or pkg/storage (helm3/init.go, helm4/init.go: Init and Configure),
//     which would make an import cycle (Helm's package under test, its
//     fixture, helm3, back to Helm's package),
//
// compiles each Helm package's test binary once with it (go test -c
// -overlay), and runs the binary once per store under go tool test2json.
//
// A test of Helm's that fails on one of our stores must either fail on the
// Secrets control run too (reported as "expected, fails on Secrets too",
// with the control's reason) or be listed in known.go with its reason;
// anything else fails TestHelmSuites, and so does a listed test that does
// not fail (passes, is skipped, no longer exists, or fails on Secrets
// too), so the list stays honest.
//
// Run it alone, with its report (the per-store pass/fail tables, then every
// failing test with its verdict and reason):
//
//	go test -count=1 -v -run TestHelmSuites ./internal/testing/helmsuites/
//
// It needs the go command (the one on PATH, as go test puts first; the
// toolchain of `go env GOROOT`) and Helm's modules in the module cache
// (`go env GOMODCACHE`; go mod download fetches them, then it runs
// offline). PostgreSQL is found as internal/testenv/sqlenv finds it; each
// test of Helm's works in a schema of its own there.
package helmsuites
