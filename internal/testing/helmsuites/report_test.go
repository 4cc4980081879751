package helmsuites

import (
	"regexp"
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	const suite = "helm.sh/helm/v3/pkg/action"
	rep := new(report)
	control := testRun(storeSecrets, "TestA=pass:", "TestA/x=fail:no", "TestB=fail:both", "TestC=pass:")
	control.stores = 3
	rep.add(suite, "v3.22.0", control, nil)
	for _, st := range []string{"memstore", "sqlite"} {
		r := testRun(st, "TestA=pass:", "TestA/x=pass:", "TestB=fail:both", "TestC=fail:scoped")
		r.stores = 3
		rep.add(suite, "v3.22.0", r, judge(suite, r, control, known(suite, "cause A", "scoped", "TestC"), nil))
	}
	rep.skip(suite, "v3.22.0", storePostgres, "no PostgreSQL server")
	out := rep.String()
	for _, want := range []string{
		suite + " v3.22.0\n",
		`secrets +2 +1 +0 +0 +1 +0 +3 *\n`,
		`sqlite +1 +2 +0 +1 +0 +0 +3 +1 +1 +0 +0 *\n`,
		`postgres +\(no PostgreSQL server\)`,
		`  TestB \[memstore sqlite\] expected, fails on Secrets too: both\n`,
		`  TestC \[memstore sqlite\] known: cause A\n      here: scoped\n`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "TestA") {
		t.Errorf("the report lists TestA, which passed on our stores:\n%s", out)
	}
}
