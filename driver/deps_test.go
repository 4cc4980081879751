package driver_test

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/helmstore/helmstore/"

// What a package that knows no Helm must not link, by import path prefix.
var (
	// anyHelm is every Helm and every Kubernetes package.
	anyHelm = []string{"helm.sh/", "k8s.io/"}
	// helmFace is what the Helm 3 face links and a test that needs no
	// service must not: Helm's action and storage packages, client-go and
	// cli-runtime (several hundred packages between them).
	helmFace = []string{"helm.sh/helm/v3/pkg/action", "helm.sh/helm/v3/pkg/storage", "k8s.io/client-go/", "k8s.io/cli-runtime/"}
	// helm4Face is what of the Helm 4 face a test of Helm 4's codec must not
	// link (Helm 4's chart package itself links client-go's scheme).
	helm4Face = []string{"helm.sh/helm/v4/pkg/action", "helm.sh/helm/v4/pkg/storage", "k8s.io/cli-runtime/"}
	// helm3, helm4: the one Helm a codec of the other must not link.
	helm3 = []string{"helm.sh/helm/v3/"}
	helm4 = []string{"helm.sh/helm/v4/"}
)

// The backend interface, the byte codec, the engine and every backend but
// crsplit link no Helm and no Kubernetes package (Helm's types reach it only
// through a face's codec); each Helm's codec links no package of the other
// Helm; and the test binaries of these packages and of the Helms' codecs
// link none of the faces, so that they build and run in seconds. The face itself does link all it is checked for, so a package
// missing from a list is missing because it is not linked, not because the
// check cannot see it.
func TestLinksNoHelm(t *testing.T) {
	t.Parallel()
	linked := goListDeps(t, "driver", "internal/codec", "internal/engine", "internal/envelope", "encryption", "cas", "memstore",
		"sql/postgres", "sql/mysql", "sql/sqlite", "redis", "cosmos", "internal/helm3codec", "internal/helm4codec", "helm3")
	for _, c := range []struct {
		pkg    string // a package of the module; with ".test", its test binary
		banned []string
	}{
		{"driver", anyHelm},
		{"internal/codec", anyHelm},
		{"internal/engine", anyHelm},
		// Below the faces, nothing but crsplit (a Kubernetes store) links
		// Kubernetes: the engine validates names with rules of its own.
		{"internal/envelope", anyHelm},
		{"encryption", anyHelm},
		{"cas", anyHelm},
		{"memstore", anyHelm},
		{"sql/postgres", anyHelm},
		{"sql/mysql", anyHelm},
		{"sql/sqlite", anyHelm},
		{"redis", anyHelm},
		{"cosmos", anyHelm},
		{"driver.test", helmFace},
		{"internal/codec.test", helmFace},
		{"internal/engine.test", helmFace},
		{"internal/helm3codec.test", helmFace},
		{"internal/helm3codec", helm4},
		{"internal/helm4codec", helm3},
		{"internal/helm4codec.test", helm4Face},
	} {
		deps, ok := linked[c.pkg]
		if !ok {
			t.Fatalf("go list gave no dependencies of %s", c.pkg)
		}
		var bad []string
		for _, d := range deps {
			if slices.ContainsFunc(c.banned, func(b string) bool { return strings.HasPrefix(d, b) }) {
				bad = append(bad, d)
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s links %d packages under %v: %s", c.pkg, len(bad), c.banned, strings.Join(bad[:min(len(bad), 8)], ", "))
		}
	}
	for _, b := range helmFace {
		if !slices.ContainsFunc(linked["helm3"], func(d string) bool { return strings.HasPrefix(d, b) }) {
			t.Errorf("the Helm 3 face links no %s*: the check cannot see what it looks for", b)
		}
	}
}

// goListDeps returns what each of the module's packages pkgs links, by the
// package's path in the module, and what its test binary links, by that path
// with ".test".
func goListDeps(t *testing.T, pkgs ...string) map[string][]string {
	t.Helper()
	args := []string{"list", "-test", "-f", `{{.ImportPath}}|{{join .Deps " "}}`}
	for _, p := range pkgs {
		args = append(args, module+p)
	}
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		var stderr []byte
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			stderr = ee.Stderr
		}
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, stderr)
	}
	linked := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		// A package as its own test compiles it is "path [path.test]": skipped.
		name, deps, _ := strings.Cut(line, "|")
		if path, ok := strings.CutPrefix(name, module); ok && !strings.Contains(path, " ") {
			linked[path] = strings.Fields(deps)
		}
	}
	return linked
}

// testSupport is what only tests may link: the module's test support and
// its conformance suite.
var testSupport = []string{module + "internal/testing/", module + "drivertest"}

// No package a program links (every package of the module outside
// internal/testing, drivertest and examples' test helpers) links test
// support: test harnesses live under internal/testing/, and production
// reaches none of them.
func TestProductionLinksNoTestSupport(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Deps " "}}`, module+"...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, "|")
		if slices.ContainsFunc(testSupport, func(p string) bool { return strings.HasPrefix(pkg, p) }) {
			continue
		}
		checked++
		for _, d := range strings.Fields(deps) {
			if slices.ContainsFunc(testSupport, func(p string) bool { return strings.HasPrefix(d, p) }) {
				t.Errorf("%s links test support %s", pkg, d)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d packages checked: the listing went wrong", checked)
	}
}

// A provider meets the engine through this package alone: it imports
// nothing under internal/ but what is a store's own plumbing (sqlite's
// file lock), never the codec, the engine or encryption's envelope.
func TestProvidersReachNothingInternal(t *testing.T) {
	t.Parallel()
	allowed := map[string][]string{"sql/sqlite": {module + "internal/filelock"}}
	for _, p := range []string{"crsplit", "cosmos", "redis", "memstore", "sql/postgres", "sql/mysql", "sql/sqlite", "sql/sqlbackend"} {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports " "}}`, module+p).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", p, err, out)
		}
		for _, imp := range strings.Fields(string(out)) {
			if strings.HasPrefix(imp, module+"internal/") && !slices.Contains(allowed[p], imp) {
				t.Errorf("provider %s imports %s", p, imp)
			}
		}
	}
}
