package helmsuites

import (
	"slices"
	"strings"
	"testing"
)

// TestKnownFailures checks the lists' form: each test once in both, in a
// suite that runs, with a cause and what its reason contains (known) or
// why (flaky).
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
	for _, f := range flakyTests {
		id := f.suite + " " + f.test
		if seen[id] {
			t.Errorf("%s: listed twice, or both as known and as flaky", id)
		}
		seen[id] = true
		if !slices.Contains(suites, f.suite) || !strings.HasPrefix(f.test, "Test") || f.why == "" {
			t.Errorf("%s: want a suite that runs, a test name and why: %+v", id, f)
		}
	}
}
