package helmsuites

import (
	"strings"
	"testing"
)

// testRun builds a run on store from "name=action:output" entries
// (action "" for a test that never finished).
func testRun(store string, entries ...string) *run {
	r := &run{store: store, tests: map[string]*testResult{}}
	for _, e := range entries {
		name, rest, _ := strings.Cut(e, "=")
		action, out, _ := strings.Cut(rest, ":")
		tr := &testResult{action: action, output: []string{"=== RUN   " + name}}
		if out != "" {
			tr.output = append(tr.output, "    x_test.go:1: "+out)
		}
		r.tests[name] = tr
		r.order = append(r.order, name)
	}
	return r
}

func TestJudge(t *testing.T) {
	const suite = "helm.sh/helm/v3/pkg/action"
	ours := testRun("sqlite",
		"TestPass=pass:",
		"TestOurs=fail:boom",
		"TestBoth=fail:ours too",
		"TestKnown=fail:store is scoped to namespace x",
		"TestKnownPasses=pass:",
		"TestKnownSkips=skip:",
		"TestKnownOtherReason=fail:something else",
		"TestKnownOnSecrets=fail:scoped",
		"TestParent=fail:",
		"TestParent/sub=fail:in sub",
		"TestListedParent=fail:",
		"TestListedParent/sub=fail:scoped",
		"TestNoControl=fail:new",
		"TestUnfinished=:",
		"TestFlakyFails=fail:one goroutine more",
		"TestFlakyPasses=pass:",
	)
	control := testRun("secrets",
		"TestPass=pass:", "TestOurs=pass:", "TestBoth=fail:secrets too", "TestKnown=pass:",
		"TestKnownPasses=pass:", "TestKnownSkips=pass:", "TestKnownOtherReason=pass:",
		"TestKnownOnSecrets=fail:secrets", "TestParent=pass:", "TestParent/sub=pass:",
		"TestListedParent=pass:", "TestListedParent/sub=pass:", "TestUnfinished=pass:",
		"TestOnlyOnSecrets=pass:", "TestFlakyFails=pass:", "TestFlakyPasses=fail:two more",
	)
	list := append(
		known(suite, "cause A", "scoped", "TestKnown", "TestKnownPasses", "TestKnownSkips",
			"TestKnownOtherReason", "TestKnownOnSecrets", "TestListedParent", "TestListedParent/sub", "TestGone"),
		known("helm.sh/helm/v4/pkg/action", "cause B", "x", "TestOurs")..., // another suite's: no effect here
	)
	want := map[string]string{
		"TestOurs":             verdictProblem + "|fails here, passes on Secrets",
		"TestBoth":             verdictExpected + "|secrets too",
		"TestKnown":            verdictKnown + "|cause A",
		"TestKnownPasses":      verdictProblem + "|but it passes on sqlite",
		"TestKnownSkips":       verdictProblem + "|but it is skipped on sqlite",
		"TestKnownOtherReason": verdictProblem + "|fails for another reason",
		"TestKnownOnSecrets":   verdictProblem + "|fails on Secrets too",
		"TestParent/sub":       verdictProblem + "|fails here, passes on Secrets",
		"TestListedParent":     verdictProblem + "|comes from its subtests",
		"TestListedParent/sub": verdictKnown + "|cause A",
		"TestNoControl":        verdictProblem + "|did not run on Secrets",
		"TestUnfinished":       verdictProblem + "|fails here, passes on Secrets",
		"TestOnlyOnSecrets":    verdictProblem + "|did not run on sqlite",
		"TestGone":             verdictProblem + "|no such test ran",
		"TestFlakyFails":       verdictFlaky + "|timing",
	}
	got := map[string]finding{}
	flaky := []flakyTest{{suite, "TestFlakyFails", "timing"}, {suite, "TestFlakyPasses", "timing"}, {"other", "TestOurs", "not this suite's"}}
	for _, f := range judge(suite, ours, control, list, flaky) {
		if _, dup := got[f.test]; dup {
			t.Errorf("%s: judged twice", f.test)
		}
		got[f.test] = f
	}
	for name, w := range want {
		verdict, why, _ := strings.Cut(w, "|")
		f, ok := got[name]
		if !ok {
			t.Errorf("%s: no verdict, want %s (%s)", name, verdict, why)
			continue
		}
		if f.verdict != verdict || !strings.Contains(f.why, why) {
			t.Errorf("%s: %s (%s), want %s (containing %q)", name, f.verdict, f.why, verdict, why)
		}
	}
	for name, f := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: unexpected verdict %s (%s)", name, f.verdict, f.why)
		}
	}
	if f := got["TestOurs"]; f.reason != "boom" {
		t.Errorf("TestOurs: reason %q, want boom", f.reason)
	}
	if f := got["TestUnfinished"]; !strings.Contains(f.reason, "did not finish") {
		t.Errorf("TestUnfinished: reason %q, want it to say it did not finish", f.reason)
	}
}

// TestJudgeAllPass checks that a run where every test passes, and nothing
// is listed, has no findings.
func TestJudgeAllPass(t *testing.T) {
	r := testRun("memstore", "TestA=pass:", "TestA/b=pass:", "TestC=skip:")
	if fs := judge("s", r, testRun("secrets", "TestA=pass:", "TestA/b=pass:", "TestC=pass:"), nil, nil); len(fs) != 0 {
		t.Errorf("findings %+v, want none", fs)
	}
}
