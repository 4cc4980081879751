package memstore_test

import (
	"go/build"
	"strings"
	"testing"
)

// memstore is written as a third party would write a backend: with the
// public names of package driver only. If it needed an internal
// package, a backend outside this module could not be written.
func TestOnlyPublicImports(t *testing.T) {
	pkg, err := build.ImportDir(".", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range pkg.Imports {
		if strings.Contains(imp, "/internal/") || strings.HasSuffix(imp, "/internal") {
			t.Errorf("memstore imports %s: a backend outside the module could not", imp)
		}
	}
	if len(pkg.Imports) == 0 {
		t.Fatal("no imports found: the test reads the wrong directory")
	}
}
