package helmsuites

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRewriteTests(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		"action_test.go": "package action\nfunc f(t *testing.T) { c := Configuration{Releases: storage.Init(driver.NewMemory())}; d := driver.NewMemory(); d.SetLogger(nil) }\n",
		"other_test.go":  "package action\nfunc g() {}\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := listedPackage{ImportPath: "helm.sh/helm/v3/pkg/action", Name: "action", Dir: src, TestGoFiles: []string{"action_test.go", "other_test.go"}}
	out := t.TempDir()
	replace := map[string]string{}
	var notes []string
	if err := rewriteTests(p, out, replace, &notes); err != nil {
		t.Fatal(err)
	}
	if len(replace) != 1 || replace[filepath.Join(src, "action_test.go")] != filepath.Join(out, "action_test.go") {
		t.Fatalf("replace = %v, want action_test.go alone mapped into %s", replace, out)
	}
	got, err := os.ReadFile(filepath.Join(out, "action_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(files["action_test.go"], "storage.Init(driver.NewMemory())", "storage.Init(helmstoreDriver(t, driver.NewMemory()))", 1)
	if string(got) != want {
		t.Errorf("rewritten:\n%s\nwant:\n%s", got, want)
	}
	if len(notes) != 1 || !strings.HasSuffix(notes[0], "action_test.go: 1") {
		t.Errorf("notes = %q", notes)
	}
	if b, _ := os.ReadFile(filepath.Join(src, "action_test.go")); string(b) != files["action_test.go"] {
		t.Errorf("Helm's own file was changed")
	}

	p.TestGoFiles = []string{"other_test.go"}
	if err := rewriteTests(p, t.TempDir(), map[string]string{}, &notes); err == nil || !strings.Contains(err.Error(), "some other way") {
		t.Errorf("a package with no fixture call: %v, want an error saying Helm builds its fixture some other way", err)
	}
}

func TestFixtureSource(t *testing.T) {
	for _, h := range helms {
		src, err := fixtureSource("storage", h)
		if err != nil {
			t.Fatalf("%s: %v", h.name, err)
		}
		for _, want := range append([]string{
			"package storage\n",
			`hsdriver "` + h.module + `/pkg/storage/driver"`,
			`hsface "` + h.face + `"`,
			"func helmstoreDriver(t hstesting.TB, memory hsdriver.Driver) hsdriver.Driver",
			`hsos.Getenv("` + storeEnv + `")`, `hsos.Getenv("` + postgresEnv + `")`, `hsos.Getenv("` + traceEnv + `")`,
		}, providers...) {
			if !strings.Contains(string(src), want) {
				t.Errorf("%s: the fixture lacks %q:\n%s", h.name, want, src)
			}
		}
	}
}

func TestUnderDir(t *testing.T) {
	for _, c := range []struct {
		path, dir string
		want      bool
	}{
		{"/m/helm.sh/helm/v3@v3.22.0/pkg/action", "/m", true},
		{"/m", "/m", true},
		{"/mod/x", "/m", false},
		{"/home/u/.cache/helmstore/helmsuites/x/pkg/action", "/m", false},
		{"/m/../n", "/m", false},
	} {
		if got := underDir(c.path, c.dir); got != c.want {
			t.Errorf("underDir(%q, %q) = %v, want %v", c.path, c.dir, got, c.want)
		}
	}
}

func TestFileImports(t *testing.T) {
	f := filepath.Join(t.TempDir(), "init.go")
	src := "package helm3\n\nimport (\n\t\"context\"\n\tact \"helm.sh/helm/v3/pkg/action\"\n)\n\nvar _ = act.Configuration{}\nvar _ context.Context\n"
	if err := os.WriteFile(f, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := fileImports(f)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "context helm.sh/helm/v3/pkg/action" {
		t.Errorf("fileImports = %q", got)
	}
}

func TestSymlink(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	link := filepath.Join(dir, "links", "helm")
	for _, target := range []string{a, a, b} {
		if err := symlink(target, link); err != nil {
			t.Fatal(err)
		}
		if got, err := os.Readlink(link); err != nil || got != target {
			t.Fatalf("link -> %q (%v), want %q", got, err, target)
		}
	}
}
