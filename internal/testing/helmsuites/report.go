package helmsuites

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"
)

// report gathers every suite's runs and findings, for the tables
// TestHelmSuites logs at its end.
type report struct {
	mu     sync.Mutex
	suites map[string]*suiteReport
}

// suiteReport is one Helm package's runs and our stores' findings.
type suiteReport struct {
	version  string               // Helm's module version
	runs     map[string]*run      // by store
	findings map[string][]finding // by our store
	absent   map[string]string    // stores that did not run, and why
}

// suite returns the report of the suite (a Helm package) at version.
func (r *report) suite(name, version string) *suiteReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.suites == nil {
		r.suites = map[string]*suiteReport{}
	}
	s := r.suites[name]
	if s == nil {
		s = &suiteReport{version: version, runs: map[string]*run{}, findings: map[string][]finding{}, absent: map[string]string{}}
		r.suites[name] = s
	}
	return s
}

// add records a store's run and, for one of our stores, its findings.
func (r *report) add(suite, version string, rn *run, fs []finding) {
	s := r.suite(suite, version)
	r.mu.Lock()
	defer r.mu.Unlock()
	s.runs[rn.store] = rn
	if fs != nil {
		s.findings[rn.store] = fs
	}
}

// skip records that store did not run on suite, and why.
func (r *report) skip(suite, version, store, why string) {
	s := r.suite(suite, version)
	r.mu.Lock()
	defer r.mu.Unlock()
	s.absent[store] = why
}

// tally is how many tests passed, failed (or never finished) and were
// skipped.
type tally struct{ pass, fail, skip int }

// counts returns the tally of rn's top-level tests and of their subtests.
func counts(rn *run) (tests, subtests tally) {
	for name, t := range rn.tests {
		c := &tests
		if strings.Contains(name, "/") {
			c = &subtests
		}
		switch t.action {
		case "pass":
			c.pass++
		case "skip":
			c.skip++
		default:
			c.fail++
		}
	}
	return
}

// String renders the report: per suite, a table of every store's counts,
// then every test that did not pass on one of our stores, with its verdict
// and reasons.
func (r *report) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	b.WriteString("Helm's test suites on helmstore's stores. Rows: memory, Helm's Memory driver (Helm's tests as they are); secrets, Helm's Secrets driver on a fake clientset (the control); then ours. Columns: top-level tests and subtests (a test fails when a subtest does), the stores the fixture made, and the verdicts on the tests (subtests included) that failed on ours.\n")
	names := make([]string, 0, len(r.suites))
	for n := range r.suites {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		r.suites[n].write(&b, n)
	}
	return b.String()
}

// stores is the order of a suite's rows.
var stores = append([]string{storeMemory, storeSecrets}, ourStores...)

// write renders suite s, named name, into b.
func (s *suiteReport) write(b *strings.Builder, name string) {
	fmt.Fprintf(b, "\n%s %s\n", name, s.version)
	w := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "store\ttests: pass\tfail\tskip\tsubtests: pass\tfail\tskip\tstores made\tfails on Secrets too\tknown\tflaky\tproblems\t")
	for _, st := range stores {
		rn := s.runs[st]
		if rn == nil {
			if why, ok := s.absent[st]; ok {
				fmt.Fprintf(w, "%s\t(%s)\n", st, why)
			}
			continue
		}
		tests, subs := counts(rn)
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t", st, tests.pass, tests.fail, tests.skip, subs.pass, subs.fail, subs.skip, rn.stores)
		if st == storeMemory || st == storeSecrets {
			fmt.Fprintln(w, "\t\t\t\t")
			continue
		}
		n := map[string]int{}
		for _, f := range s.findings[st] {
			n[f.verdict]++
		}
		fmt.Fprintf(w, "%d\t%d\t%d\t%d\t\n", n[verdictExpected], n[verdictKnown], n[verdictFlaky], n[verdictProblem])
	}
	w.Flush()
	for _, st := range stores {
		if rn := s.runs[st]; rn != nil {
			for _, c := range rn.crashes {
				fmt.Fprintf(b, "  %s: a test ended the test binary; the tests after it ran in a new one: %s\n", st, clip(c))
			}
		}
	}
	s.writeFindings(b)
}

// writeFindings lists each finding once, with the stores it was made on
// and the reason of the first of them (a reason may differ between stores
// in a time or a random name).
func (s *suiteReport) writeFindings(b *strings.Builder) {
	type key struct{ test, verdict string }
	var order []key
	on := map[key][]string{}
	first := map[key]finding{}
	for _, st := range ourStores {
		for _, f := range s.findings[st] {
			k := key{f.test, f.verdict}
			if on[k] == nil {
				order = append(order, k)
				first[k] = f
			}
			on[k] = append(on[k], st)
		}
	}
	slices.SortStableFunc(order, func(a, b key) int { return strings.Compare(a.test, b.test) })
	for _, k := range order {
		f := first[k]
		fmt.Fprintf(b, "  %s [%s] %s: %s\n", k.test, strings.Join(on[k], " "), k.verdict, clip(f.why))
		if f.reason != "" && f.reason != f.why {
			fmt.Fprintf(b, "      here: %s\n", clip(f.reason))
		}
	}
}
