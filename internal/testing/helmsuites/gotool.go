package helmsuites

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// goTool is the go command the suites are built and run with.
type goTool struct {
	bin      string // the go command: $(go env GOROOT)/bin/go
	root     string // go env GOROOT
	modCache string // go env GOMODCACHE
	gomod    string // go env GOMOD: helmstore's go.mod
	modfile  string // the go.mod that go list and go test use, if not gomod
}

// findGo finds the go command on PATH (go test puts its own toolchain's
// first) and asks it for GOROOT, GOMODCACHE and GOMOD; the suites then use
// GOROOT's own go command, so every step uses one toolchain.
func findGo() (*goTool, error) {
	bin, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("no go command on PATH: %w", err)
	}
	out, err := exec.Command(bin, "env", "GOROOT", "GOMODCACHE", "GOMOD").Output()
	if err != nil {
		return nil, fmt.Errorf("%s env GOROOT GOMODCACHE GOMOD: %w", bin, commandError(err))
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 || lines[0] == "" || lines[1] == "" {
		return nil, fmt.Errorf("%s env GOROOT GOMODCACHE GOMOD printed %q", bin, out)
	}
	if lines[2] == "" || lines[2] == os.DevNull {
		return nil, errNoGoMod
	}
	g := &goTool{bin: bin, root: lines[0], modCache: lines[1], gomod: lines[2]}
	if p := filepath.Join(g.root, "bin", "go"); isFile(p) {
		g.bin = p
	}
	return g, nil
}

// withModfile returns g with go list and go test using modfile in place
// of helmstore's go.mod.
func (g *goTool) withModfile(modfile string) *goTool {
	c := *g
	c.modfile = modfile
	return &c
}

// run runs the go command with args in the current directory (inside
// helmstore's module) and returns its standard output; an error carries
// the command and its standard error.
func (g *goTool) run(args ...string) ([]byte, error) {
	if g.modfile != "" && len(args) > 0 && (args[0] == "list" || args[0] == "test") {
		args = append([]string{args[0], "-modfile=" + g.modfile}, args[1:]...)
	}
	cmd := exec.Command(g.bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// listedPackage is what go list -json tells of a package.
type listedPackage struct {
	ImportPath  string
	Name        string
	Dir         string
	GoFiles     []string
	TestGoFiles []string
	Deps        []string
	Module      *struct {
		Path string
		Main bool
	}
	Error *struct{ Err string }
}

// list runs go list -json with args and returns the packages it lists.
func (g *goTool) list(args ...string) ([]listedPackage, error) {
	out, err := g.run(append([]string{"list", "-e", "-json=ImportPath,Name,Dir,GoFiles,TestGoFiles,Deps,Module,Error"}, args...)...)
	if err != nil {
		return nil, err
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list: %w", err)
		}
		if p.Error != nil {
			return nil, fmt.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// commandError returns err with the standard error of the command that
// failed, when it has one.
func commandError(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return fmt.Errorf("%v: %s", err, strings.TrimSpace(string(ee.Stderr)))
	}
	return err
}

// isFile reports whether path names an existing regular file.
func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// errNoGoMod is returned where helmstore's go.mod cannot be found.
var errNoGoMod = errors.New("go env GOMOD names no go.mod: run the test inside helmstore's module")
