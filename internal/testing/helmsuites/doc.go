// Package helmsuites runs Helm's own test suites against helmstore's
// stores: the tests of Helm's pkg/action and pkg/storage, of Helm 3
// (helm.sh/helm/v3, through package helm3) and Helm 4 (helm.sh/helm/v4,
// through package helm4), at the versions go.mod requires, from the module
// cache, with the fixtures' driver.NewMemory() swapped for a new helmstore
// store at each call: memstore, sqlite (a file in the test's temporary
// directory) and, where a PostgreSQL server is found, postgres (a schema
// of its own, dropped after the test). Each suite also runs on Helm's own
// Memory driver (Helm's tests as they are) and on Helm's Secrets driver
// over a fake clientset, the control. The stores are scoped to namespace
// "default", as the control's Secrets are.
//
// Nothing of Helm's is copied into this repository. At test time,
// TestHelmSuites
//   - links Helm's module directory in the module cache from
//     ~/.cache/helmstore/helmsuites/ (os.UserCacheDir), and writes into a
//     temporary directory a copy of go.mod (and go.sum) that replaces
//     Helm's module by the link, for go list and go test -modfile: the go
//     command refuses an overlay of files beneath GOMODCACHE, and the link
//     is outside it (it outlives the run so that the build cache knows
//     Helm's packages compiled from there);
//   - writes a go build overlay (go help build, -overlay) that replaces
//     each of Helm's test files that calls X(driver.NewMemory()) with a
//     copy calling X(helmstoreDriver(t, driver.NewMemory())), adds to the
//     package a file made from fixture.tmpl that defines helmstoreDriver
//     (the store named by HELMSTORE_SUITE_STORE), and hides the files of
//     helmstore's packages that import Helm's pkg/action or pkg/storage
//     (helm3/init.go, helm4/init.go: Init and Configure), which would make
//     an import cycle (Helm's package, its test's fixture, helm3, Helm's
//     package again);
//   - compiles each Helm's two test binaries once (go test -c -overlay),
//     and runs each on every store at once under go tool test2json, in
//     Helm's package directory, as go test would. A test that ends its
//     binary (a panic) is reported, and the tests after it run in a new
//     binary.
//
// A test of Helm's that fails on one of our stores must either fail on the
// Secrets control too (reported as "expected, fails on Secrets too", with
// the control's reason) or be listed in known.go, with its cause and a
// text its failure's reason contains; anything else fails TestHelmSuites,
// and so does a listed test that does not fail that way (it passes, is
// skipped, fails for another reason, fails on Secrets too, or no longer
// exists), so the list stays honest. The few tests of Helm's whose outcome
// depends on timing on any driver are listed in known.go as flaky: their
// failures are reported and not judged.
//
// Run it alone, with its report (per Helm package, a table of each store's
// passes and failures, then every test that did not pass on our stores,
// with its verdict and reasons):
//
//	go test -count=1 -v -run TestHelmSuites ./internal/testing/helmsuites/
//
// It needs the go command (the one on PATH, which go test puts first; the
// toolchain of its `go env GOROOT`) and Helm's modules in the module cache
// (`go env GOMODCACHE`; go mod download fetches them, after which it runs
// offline). PostgreSQL is found as internal/testing/testenv/sqlenv finds it.
// HELMSTORE_SUITES_KEEP=1 keeps the overlay and the test binaries, and
// logs how to rerun one of Helm's tests by hand.
package helmsuites
