package drivertest

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Every namespace the suite's sources name in a Namespace("...") call is in
// Namespaces, so that a harness that makes them first (crsplit's) makes all
// the suite writes to.
func TestNamespacesListed(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	named := regexp.MustCompile(`Namespace\("([a-z0-9-]+)"\)`)
	seen := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range named.FindAllStringSubmatch(string(src), -1) {
			seen++
			if !slices.Contains(Namespaces, m[1]) {
				t.Errorf("%s names namespace %q, which Namespaces does not list", f, m[1])
			}
		}
	}
	if seen == 0 {
		t.Fatal("no Namespace(\"...\") call found: the check looks in the wrong place")
	}
}
