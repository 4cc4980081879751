package helmsuites

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/helmstore/helmstore/internal/testing/testenv/sqlenv"
)

// TestHelmSuites runs Helm's pkg/action and pkg/storage tests, of Helm 3
// and Helm 4, on Helm's Memory and Secrets drivers and on each of our
// stores, and fails on every test of Helm's that fails on one of our
// stores without failing on Secrets or being listed in known.go, and on
// every listed test that does not fail. See the package doc.
func TestHelmSuites(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: Helm's suites compile two large test binaries per Helm")
	}
	g, err := findGo()
	if err != nil {
		t.Fatal(err)
	}
	pg, pgWhy := "", "TestHelmSuites/postgres-server did not run (-run)"
	t.Run("postgres-server", func(t *testing.T) {
		pgWhy = "no PostgreSQL server: see TestHelmSuites/postgres-server"
		pg = sqlenv.PostgresServer(t)
	})
	rep := new(report)
	start := time.Now()
	t.Cleanup(func() { t.Logf("%s\n(%s)", rep, time.Since(start).Round(time.Second)) })
	for _, h := range helms {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			testHelm(t, g, h, pg, pgWhy, rep)
		})
	}
}

// testHelm builds h's suites over the fixture, runs each on every store
// at once, and judges each of our stores' runs in a subtest
// (TestHelmSuites/helm3/action/sqlite). pg is PostgreSQL's URL, or "" and
// pgWhy says why there is none.
func testHelm(t *testing.T, g *goTool, h helmVersion, pg, pgWhy string, rep *report) {
	dir := workDir(t, h.name)
	hm, err := linkHelm(g, h, linkDir(dir), dir)
	if err != nil {
		t.Fatal(err)
	}
	g = g.withModfile(hm.modfile)
	o, err := writeOverlay(g, h, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s %s: %s, built as %s; fixture calls swapped: %s; helmstore files hidden: %s",
		h.module, hm.version, hm.cache, hm.link, strings.Join(o.rewrites, ", "), strings.Join(o.hidden, ", "))
	start := time.Now()
	bins, err := compile(g, h, o, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("compiled %s's suites in %s", h.name, time.Since(start).Round(time.Second))

	type job struct {
		pkg, store string
		r          *run
		err        error
	}
	var jobs []*job
	for _, p := range h.packages {
		for _, st := range stores {
			if st == storePostgres && pg == "" {
				rep.skip(h.pkg(p), hm.version, st, pgWhy)
				continue
			}
			jobs = append(jobs, &job{pkg: h.pkg(p), store: st})
		}
	}
	start = time.Now()
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Go(func() {
			trace := filepath.Join(dir, fmt.Sprintf("trace-%d", i))
			j.r, j.err = runSuite(g, j.pkg, bins[j.pkg], o.dirs[j.pkg], j.store, trace, postgresEnv+"="+pg)
		})
	}
	wg.Wait()
	t.Logf("ran %s's suites on %d stores in %s", h.name, len(stores), time.Since(start).Round(time.Second))

	runs := map[string]*job{}
	for _, j := range jobs {
		runs[j.pkg+" "+j.store] = j
	}
	for _, p := range h.packages {
		pkg := h.pkg(p)
		t.Run(path.Base(p), func(t *testing.T) {
			control := runs[pkg+" "+storeSecrets]
			if control.err != nil {
				t.Fatalf("the control run, on Helm's Secrets driver: %v", control.err)
			}
			rep.add(pkg, hm.version, control.r, nil)
			if m := runs[pkg+" "+storeMemory]; m.err != nil {
				t.Errorf("the reference run, on Helm's Memory driver: %v", m.err)
			} else {
				rep.add(pkg, hm.version, m.r, nil)
			}
			for _, st := range ourStores {
				t.Run(st, func(t *testing.T) {
					j := runs[pkg+" "+st]
					if j == nil {
						t.Skip(pgWhy)
					}
					if j.err != nil {
						t.Fatal(j.err)
					}
					fs := judge(pkg, j.r, control.r, knownFailures, flakyTests)
					rep.add(pkg, hm.version, j.r, fs)
					for _, f := range fs {
						if f.verdict == verdictProblem {
							t.Errorf("%s: %s\n    here: %s", f.test, clip(f.why), clip(f.reason))
						}
					}
				})
			}
		})
	}
}

// workDir returns the directory for h's overlay, go.mod and test
// binaries: a temporary directory of t's, or with HELMSTORE_SUITES_KEEP=1
// one that outlives the test, to rerun a test of Helm's by hand.
func workDir(t *testing.T, name string) string {
	if os.Getenv(keepEnv) != "1" {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "helmsuites-keep-"+name+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s=1: keeping %s; to rerun a test of Helm's there: cd <Helm's package directory, as logged> && %s=<store> %s=/dev/null %s=<PostgreSQL URL, for postgres> PGHOST=%s %s/<package>.test -test.run '^TestX$' -test.v",
		keepEnv, dir, storeEnv, traceEnv, postgresEnv, noPostgres, dir)
	return dir
}
