package helmsuites

// module is helmstore's module path.
const module = "github.com/helmstore/helmstore"

// helmVersion is one major version of Helm whose test suites run against
// helmstore's stores through helmstore's face for it.
type helmVersion struct {
	name     string   // "helm3": the subtest's name
	module   string   // Helm's module path
	face     string   // the import path of helmstore's face for this Helm
	packages []string // Helm's packages whose tests run, relative to module
}

// pkg returns the import path of Helm's package p (one of h.packages).
func (h helmVersion) pkg(p string) string { return h.module + "/" + p }

// helms are the Helms whose suites run, at the versions go.mod requires.
var helms = []helmVersion{
	{name: "helm3", module: "helm.sh/helm/v3", face: module + "/helm3", packages: []string{"pkg/action", "pkg/storage"}},
	{name: "helm4", module: "helm.sh/helm/v4", face: module + "/helm4", packages: []string{"pkg/action", "pkg/storage"}},
}

// The kinds of store the suites run on: HELMSTORE_SUITE_STORE's values,
// which the fixture (fixture.tmpl) understands.
const (
	// storeMemory is Helm's own Memory driver, what Helm's tests run on
	// unchanged: a reference column in the report, not a judge.
	storeMemory = "memory"
	// storeSecrets is Helm's Secrets driver on a fake clientset: the
	// control. A test that fails there too is expected to fail on ours.
	storeSecrets = "secrets"
	// storePostgres is helmstore's postgres store, one schema per fixture;
	// it runs where a PostgreSQL server is found.
	storePostgres = "postgres"
)

// ourStores are helmstore's stores the suites judge, each a driver name
// the fixture opens with its face's Open.
var ourStores = []string{"memstore", "sqlite", storePostgres}

// providers are the packages that register ourStores, imported by the
// fixture for their side effect.
var providers = []string{module + "/memstore", module + "/sql/sqlite", module + "/sql/postgres"}

// Environment the test binaries read.
const (
	// storeEnv names the store each fixture call opens.
	storeEnv = "HELMSTORE_SUITE_STORE"
	// postgresEnv is the PostgreSQL server's URL, for storePostgres.
	postgresEnv = "HELMSTORE_SUITE_POSTGRES"
	// traceEnv names a file the fixture appends the store's kind to, a
	// line each time it makes one.
	traceEnv = "HELMSTORE_SUITE_TRACE"
	// keepEnv=1 keeps the overlay and test binaries after the test.
	keepEnv = "HELMSTORE_SUITES_KEEP"
)
