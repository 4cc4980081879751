package helmsuites

import (
	"fmt"
	"strings"
)

// The verdicts on a test of Helm's that did not pass on one of our stores.
const (
	// verdictExpected: it fails on Helm's Secrets driver too.
	verdictExpected = "expected, fails on Secrets too"
	// verdictKnown: it is in knownFailures.
	verdictKnown = "known"
	// verdictFlaky: it is in flakyTests, and not judged.
	verdictFlaky = "flaky, not judged"
	// verdictProblem: anything else; TestHelmSuites fails.
	verdictProblem = "PROBLEM"
)

// finding is the verdict on one test of Helm's on one of our stores: one
// that failed there, or one that knownFailures lists.
type finding struct {
	test    string
	verdict string
	why     string // what the verdict rests on: the list's or the control's reason, or the problem
	reason  string // why it failed on our store, from its output ("" when it did not fail)
}

// failed reports whether r (nil when the test did not run) failed or
// never finished.
func failed(r *testResult) bool { return r != nil && (r.action == "fail" || r.action == "") }

// judge gives the verdict on every test of suite that failed in ours, a
// run on one of our stores, or that known lists, against control, the run
// on Helm's Secrets driver. The tests flaky lists are reported when they
// fail, and not judged.
func judge(suite string, ours, control *run, known []knownFailure, flaky []flakyTest) []finding {
	listed := map[string]knownFailure{}
	for _, k := range known {
		if k.suite == suite {
			listed[k.test] = k
		}
	}
	unjudged := map[string]string{}
	for _, f := range flaky {
		if f.suite == suite {
			unjudged[f.test] = f.why
		}
	}
	names := append([]string(nil), ours.order...)
	for _, n := range control.order {
		if ours.tests[n] == nil {
			names = append(names, n)
		}
	}
	var out []finding
	for _, name := range names {
		o, c := ours.tests[name], control.tests[name]
		k, isListed := listed[name]
		delete(listed, name)
		f := finding{test: name}
		if failed(o) {
			f.reason = reasonOf(o.output)
			if f.reason == "" && o.action == "" {
				f.reason = "did not finish: the test binary ended"
			}
		}
		if why, ok := unjudged[name]; ok {
			if failed(o) {
				f.verdict, f.why = verdictFlaky, why
				out = append(out, f)
			}
			continue
		}
		switch {
		case o == nil:
			f.verdict, f.why = verdictProblem, fmt.Sprintf("did not run on %s, but ran on Secrets", ours.store)
		case failed(o) && c == nil:
			f.verdict, f.why = verdictProblem, "fails here, and did not run on Secrets"
		case failed(o) && failingSubtests(ours, name):
			if !isListed {
				continue
			}
			f.verdict, f.why = verdictProblem, "listed in known.go, but its failure comes from its subtests: list those instead"
		case failed(o) && failed(c):
			f.verdict, f.why = verdictExpected, reasonOf(c.output)
			if isListed {
				f.verdict, f.why = verdictProblem, fmt.Sprintf("listed in known.go as ours, but it fails on Secrets too (%s): take it off the list", f.why)
			}
		case failed(o) && isListed && !strings.Contains(f.reason, k.match):
			f.verdict, f.why = verdictProblem, fmt.Sprintf("listed in known.go (%s), but it fails for another reason: its reason does not contain %q", k.cause, k.match)
		case failed(o) && isListed:
			f.verdict, f.why = verdictKnown, k.cause
		case failed(o):
			f.verdict, f.why = verdictProblem, "fails here, passes on Secrets, and is not in known.go"
		case isListed:
			f.verdict, f.why = verdictProblem, fmt.Sprintf("listed in known.go (%s), but %s on %s: take it off the list", k.cause, outcome(o), ours.store)
		default:
			continue
		}
		out = append(out, f)
	}
	for _, k := range known {
		if _, stale := listed[k.test]; stale && k.suite == suite {
			out = append(out, finding{test: k.test, verdict: verdictProblem,
				why: fmt.Sprintf("listed in known.go (%s), but no such test ran on %s or on Secrets: renamed or removed?", k.cause, ours.store)})
		}
	}
	return out
}

// failingSubtests reports whether a subtest of name failed in r.
func failingSubtests(r *run, name string) bool {
	for n, t := range r.tests {
		if strings.HasPrefix(n, name+"/") && failed(t) {
			return true
		}
	}
	return false
}

// outcome names what a test that did not fail did.
func outcome(r *testResult) string {
	if r.action == "skip" {
		return "it is skipped"
	}
	return "it passes"
}
