package helmsuites

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// noPostgres is where libpq looks for a server when PGHOST names it: no
// directory. Helm 3's TestConfiguration_Init/Test_sql_driver expects its
// SQL driver, given no connection string, to fail to connect; when a
// PostgreSQL server accepts libpq's defaults (localhost:5432) it connects
// instead and panics on a nil logger, which ends the whole test binary.
const noPostgres = "/nonexistent/helmstore-suites-no-default-postgres"

// testResult is one test's (or subtest's) outcome in a run.
type testResult struct {
	action string   // "pass", "fail" or "skip"
	output []string // its lines of output, in order
}

// run is the runs of a suite's test binary on one store: one, or more
// when a test of Helm's ends the binary (a panic, a timeout), each after
// the first running the tests that had not run yet.
type run struct {
	store   string
	tests   map[string]*testResult // by full name (Test/sub)
	order   []string               // the names, in the order they started
	crashes []string               // how each binary that ended early ended
	stores  int                    // how many stores the fixture made
}

// runSuite runs the test binary bin in dir, Helm's package directory (as
// go test would), on store, under go tool test2json, and returns what
// each test did. When a test ends the binary, the tests that had not run
// yet run in a new one. The fixture records each store it makes in the
// file trace (which must not exist yet). extraEnv is added to the
// environment.
func runSuite(g *goTool, pkg, bin, dir, store, trace string, extraEnv ...string) (*run, error) {
	env := append(os.Environ(), storeEnv+"="+store, traceEnv+"="+trace, "PGHOST="+noPostgres)
	env = append(env, extraEnv...)
	todo, err := listTests(bin, dir, env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pkg, err)
	}
	r := &run{store: store, tests: map[string]*testResult{}}
	for len(todo) > 0 {
		before := len(r.tests)
		if err := r.runOnce(g, pkg, bin, dir, env, todo); err != nil {
			return nil, fmt.Errorf("%s on %s: %w", pkg, store, err)
		}
		var left []string
		for _, name := range todo {
			if t := r.tests[name]; t == nil || t.action == "" {
				left = append(left, name)
			}
		}
		if len(left) == 0 {
			break
		}
		if len(r.tests) == before {
			return nil, fmt.Errorf("%s on %s: the test binary ends before running any of %d tests: %s", pkg, store, len(left), r.crashes[len(r.crashes)-1])
		}
		// Tests that never finished are failed; the rest run again.
		todo = todo[:0]
		for _, name := range left {
			if r.tests[name] == nil {
				todo = append(todo, name)
			}
		}
	}
	if r.stores, err = countStores(trace, store); err != nil {
		return nil, fmt.Errorf("%s on %s: %w", pkg, store, err)
	}
	return r, nil
}

// listTests returns the top-level tests (and examples) of the test binary
// bin.
func listTests(bin, dir string, env []string) ([]string, error) {
	cmd := exec.Command(bin, "-test.list", ".")
	cmd.Dir, cmd.Env = dir, env
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s -test.list .: %w", bin, commandError(err))
	}
	var names []string
	for _, n := range strings.Fields(string(out)) {
		if !strings.HasPrefix(n, "Benchmark") {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s lists no test", bin)
	}
	return names, nil
}

// runOnce runs the test binary on the tests named (top-level), adding
// what they did to r. A binary that ends before each of them finished is
// recorded in r.crashes, and its output outside any test (a panic's) is
// added to the output of the last test it started that failed.
func (r *run) runOnce(g *goTool, pkg, bin, dir string, env, names []string) error {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	cmd := exec.Command(g.bin, "tool", "test2json", "-t", "-p", pkg, bin,
		"-test.v=test2json", "-test.count=1", "-test.timeout=5m", "-test.run=^("+strings.Join(quoted, "|")+")$")
	cmd.Dir, cmd.Env = dir, env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	first := len(r.order)
	loose, perr := r.parseEvents(out)
	if perr != nil {
		io.Copy(io.Discard, out)
	}
	werr := cmd.Wait()
	if perr != nil {
		return perr
	}
	var ee *exec.ExitError
	if werr != nil && !errors.As(werr, &ee) {
		return werr
	}
	for _, n := range names {
		if t := r.tests[n]; t == nil || t.action == "" {
			r.crash(first, loose, fmt.Sprintf("%v%s", werr, stderrNote(stderr.String())))
			break
		}
	}
	return nil
}

// crash records a binary that ended early (how: ended), and adds its
// output outside any test to the last test started since order[first]
// that did not pass. The record names that test and the first reason
// found in its output, its parents' or the output outside any test.
func (r *run) crash(first int, loose []string, ended string) {
	why := reasonOf(loose)
	for i := len(r.order) - 1; i >= first; i-- {
		name := r.order[i]
		if t := r.tests[name]; t.action == "fail" || t.action == "" {
			t.output = append(t.output, loose...)
			ended = name + ": " + ended
			for n := name; why == ""; n = n[:strings.LastIndex(n, "/")] {
				if p := r.tests[n]; p != nil {
					why = reasonOf(p.output)
				}
				if !strings.Contains(n, "/") {
					break
				}
			}
			break
		}
	}
	if why != "" {
		ended += ": " + why
	}
	r.crashes = append(r.crashes, ended)
}

// countStores returns how many stores the fixture recorded in trace,
// failing unless there is one at least and every one is of kind store.
func countStores(trace, store string) (int, error) {
	b, err := os.ReadFile(trace)
	if errors.Is(err, os.ErrNotExist) {
		return 0, errors.New("the fixture made no store: Helm's tests no longer reach helmstoreDriver")
	} else if err != nil {
		return 0, err
	}
	lines := strings.Fields(string(b))
	for _, l := range lines {
		if l != store {
			return 0, fmt.Errorf("the fixture made a %q store, want %q", l, store)
		}
	}
	return len(lines), nil
}
