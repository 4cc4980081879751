package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestQuickstart(t *testing.T) {
	var out strings.Builder
	if err := run(&out, filepath.Join(t.TempDir(), "helm.db")); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"REVISION  STATUS      CHART      APP VERSION  IMAGE         DESCRIPTION",
		"1         superseded  web-1.4.0  1.25.0       nginx:1.25.0  Install complete",
		"5         superseded  web-1.4.0  1.25.0       nginx:1.26.1  Upgrade complete",
		"6         deployed    web-1.4.0  1.25.0       nginx:1.25.2  Rollback to 3",
		"values-only upgrades",
		"(1 chart, 5 values, 5 manifest parts)",
		`Read back through Helm 4 (package helm4, same file): 6 revisions; revision 6 deployed, "Rollback to 3"`,
		"the store now holds 0 releases and 0 parts",
	} {
		if !strings.Contains(s, want) {
			t.Fatalf("output lacks %q:\n%s", want, s)
		}
	}
	m := regexp.MustCompile(`\(([0-9.]+)x more\)`).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("no size comparison in output:\n%s", s)
	}
	if x, _ := strconv.ParseFloat(m[1], 64); x < 3 {
		t.Fatalf("helmstore stored only %.1fx less than the Secrets driver:\n%s", x, s)
	}
}

// The temporary directory of a run without -db is gone when it ends, and -h
// makes none.
func TestQuickstartLeavesNoTemporaryDirectory(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	var stdout, stderr strings.Builder
	if code := quickstart(nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Storing releases in "+tmp) {
		t.Fatalf("the store was not in TMPDIR:\n%s", stdout.String())
	}
	leftovers := func() []os.DirEntry {
		t.Helper()
		ents, err := os.ReadDir(tmp)
		if err != nil {
			t.Fatal(err)
		}
		return ents
	}
	if ents := leftovers(); len(ents) != 0 {
		t.Fatalf("the run left %s in TMPDIR", ents[0].Name())
	}

	stdout.Reset()
	stderr.Reset()
	if code := quickstart([]string{"-h"}, &stdout, &stderr); code != 0 {
		t.Fatalf("-h: exit %d", code)
	}
	if !strings.Contains(stderr.String(), "-db file") || stdout.Len() != 0 {
		t.Fatalf("-h: usage does not document -db:\n%s", stderr.String())
	}
	if ents := leftovers(); len(ents) != 0 {
		t.Fatalf("-h made %s in TMPDIR", ents[0].Name())
	}
}

// With -db the database is where it says and stays; a directory that does
// not exist is an error, not a new store.
func TestQuickstartDB(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "helm.db")
	var stdout, stderr strings.Builder
	if code := quickstart([]string{"-db", path}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("-db %s: %v", path, err)
	}
	stderr.Reset()
	missing := filepath.Join(dir, "tpyo", "helm.db")
	if code := quickstart([]string{"-db", missing}, &stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "does not exist") {
		t.Fatalf("-db %s: exit %d: %s", missing, code, stderr.String())
	}
}
