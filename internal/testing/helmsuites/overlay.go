package helmsuites

import (
	"bytes"
	_ "embed" // fixture.tmpl
	"encoding/json"
	"fmt"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
)

// memoryCall is what the overlay replaces in Helm's test files: a new
// Memory driver handed to a function (storage.Init, Init,
// NewMaxHistoryMockDriver). A Memory driver that a test keeps to configure
// itself (d := driver.NewMemory(); d.SetLogger(l)) stays Helm's.
const memoryCall = "(driver.NewMemory())"

// fixtureCall replaces memoryCall: the fixture's store, with Helm's Memory
// driver still made (so that the file's imports stay used) and returned
// only for HELMSTORE_SUITE_STORE=memory.
const fixtureCall = "(helmstoreDriver(t, driver.NewMemory()))"

// fixtureFile is the file the overlay adds to each of Helm's packages.
const fixtureFile = "zz_helmstore_fixture_test.go"

// fixtureTemplate is the source of fixtureFile.
//
//go:embed fixture.tmpl
var fixtureTemplate string

// overlay is what writeOverlay wrote.
type overlay struct {
	path     string            // the overlay file, for go test -overlay
	dirs     map[string]string // each Helm package's source directory, by import path
	rewrites []string          // each Helm file rewritten, and how many calls
	hidden   []string          // helmstore's files hidden, relative to the module
}

// writeOverlay writes into dir the overlay that builds h's test packages
// over the fixture: Helm's test files with memoryCall replaced, the
// fixture file added, and helmstore's files that import the packages
// under test hidden. g must use the go.mod of linkHelm, so that Helm's
// files are outside GOMODCACHE, where the go command lets an overlay
// replace them.
func writeOverlay(g *goTool, h helmVersion, dir string) (*overlay, error) {
	var paths []string
	for _, p := range h.packages {
		paths = append(paths, h.pkg(p))
	}
	pkgs, err := g.list(paths...)
	if err != nil {
		return nil, err
	}
	o := &overlay{path: filepath.Join(dir, "overlay.json"), dirs: map[string]string{}}
	replace := map[string]string{}
	for _, p := range pkgs {
		if underDir(p.Dir, g.modCache) {
			return nil, fmt.Errorf("%s is in %s, beneath GOMODCACHE, where no overlay may replace files: list it with linkHelm's go.mod", p.ImportPath, p.Dir)
		}
		o.dirs[p.ImportPath] = p.Dir
		if err := rewriteTests(p, filepath.Join(dir, p.Name), replace, &o.rewrites); err != nil {
			return nil, err
		}
		if err := addFixture(p, h, filepath.Join(dir, p.Name), replace); err != nil {
			return nil, err
		}
	}
	if o.hidden, err = hideImporters(g, h, paths, replace); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(struct{ Replace map[string]string }{replace}, "", "\t")
	if err != nil {
		return nil, err
	}
	return o, os.WriteFile(o.path, b, 0o644)
}

// rewriteTests writes into dir a copy of each test file of p that calls
// memoryCall, with fixtureCall instead, and maps the original to it.
func rewriteTests(p listedPackage, dir string, replace map[string]string, notes *[]string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	total := 0
	for _, f := range p.TestGoFiles {
		src, err := os.ReadFile(filepath.Join(p.Dir, f))
		if err != nil {
			return err
		}
		n := bytes.Count(src, []byte(memoryCall))
		if n == 0 {
			continue
		}
		total += n
		out := filepath.Join(dir, f)
		if err := os.WriteFile(out, bytes.ReplaceAll(src, []byte(memoryCall), []byte(fixtureCall)), 0o644); err != nil {
			return err
		}
		replace[filepath.Join(p.Dir, f)] = out
		*notes = append(*notes, fmt.Sprintf("%s/%s: %d", p.ImportPath, f, n))
	}
	if total == 0 {
		return fmt.Errorf("no test file of %s (%s) calls X%s: Helm builds its fixture some other way now; teach helmsuites that way", p.ImportPath, p.Dir, memoryCall)
	}
	return nil
}

// addFixture writes fixtureFile for p into dir and adds it to p's
// directory.
func addFixture(p listedPackage, h helmVersion, dir string, replace map[string]string) error {
	target := filepath.Join(p.Dir, fixtureFile)
	if isFile(target) {
		return fmt.Errorf("%s already exists: choose another name for the fixture file", target)
	}
	src, err := fixtureSource(p.Name, h)
	if err != nil {
		return err
	}
	out := filepath.Join(dir, fixtureFile)
	replace[target] = out
	return os.WriteFile(out, src, 0o644)
}

// fixtureSource returns the fixture file for Helm h's package named pkg,
// gofmt'ed (which also checks that it parses).
func fixtureSource(pkg string, h helmVersion) ([]byte, error) {
	t, err := template.New("fixture").Parse(fixtureTemplate)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	err = t.Execute(&b, map[string]any{
		"Package": pkg, "Helm": h.module, "Face": h.face, "Providers": providers,
		"StoreEnv": storeEnv, "PostgresEnv": postgresEnv, "TraceEnv": traceEnv,
	})
	if err != nil {
		return nil, err
	}
	src, err := format.Source(b.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the fixture for %s's %s does not parse: %v\n%s", h.module, pkg, err, b.Bytes())
	}
	return src, nil
}

// hideImporters maps to "" (hides) every file of helmstore's module, in
// the packages the fixture links, that imports one of targets (Helm's
// packages under test) or a package outside helmstore that does: linked
// into a test of a target, it would make an import cycle.
func hideImporters(g *goTool, h helmVersion, targets []string, replace map[string]string) ([]string, error) {
	deps, err := g.list(append([]string{"-deps", h.face}, providers...)...)
	if err != nil {
		return nil, err
	}
	byPath := map[string]listedPackage{}
	for _, p := range deps {
		byPath[p.ImportPath] = p
	}
	reaches := func(imp string) bool {
		p, ok := byPath[imp]
		if !ok || p.Module != nil && p.Module.Main {
			return false // helmstore's own packages are checked file by file
		}
		return slices.Contains(targets, imp) || slices.ContainsFunc(targets, func(t string) bool { return slices.Contains(p.Deps, t) })
	}
	var hidden []string
	for _, p := range deps {
		if p.Module == nil || !p.Module.Main {
			continue
		}
		for _, f := range p.GoFiles {
			path := filepath.Join(p.Dir, f)
			imps, err := fileImports(path)
			if err != nil {
				return nil, err
			}
			if slices.ContainsFunc(imps, reaches) {
				replace[path] = ""
				hidden = append(hidden, strings.TrimPrefix(p.ImportPath, module+"/")+"/"+f)
			}
		}
	}
	return hidden, nil
}

// underDir reports whether path is dir or beneath it.
func underDir(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// fileImports returns the import paths of the Go file at path.
func fileImports(path string) ([]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
	if err != nil {
		return nil, err
	}
	var imps []string
	for _, s := range f.Imports {
		p, err := strconv.Unquote(s.Path.Value)
		if err != nil {
			return nil, err
		}
		imps = append(imps, p)
	}
	return imps, nil
}
