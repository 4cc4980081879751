package helmsuites

import (
	"slices"
	"strings"
	"testing"
)

// TestKnownFailures checks the list's form: each entry once, in a suite
// that runs, with a cause and what its reason contains.
func TestKnownFailures(t *testing.T) {
	var suites []string
	for _, h := range helms {
		for _, p := range h.packages {
			suites = append(suites, h.pkg(p))
		}
	}
	seen := map[string]bool{}
	for _, k := range knownFailures {
		id := k.suite + " " + k.test
		if seen[id] {
			t.Errorf("%s: listed twice", id)
		}
		seen[id] = true
		if !slices.Contains(suites, k.suite) {
			t.Errorf("%s: %s is not a suite that runs (%v)", id, k.suite, suites)
		}
		if !strings.HasPrefix(k.test, "Test") || k.cause == "" || k.match == "" {
			t.Errorf("%s: want a test name, a cause and a match: %+v", id, k)
		}
	}
}
