package helmsuites

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The go command refuses an overlay that replaces files beneath
// GOMODCACHE. So Helm's module is reached by another path: a symbolic
// link to its directory in the module cache, named by a replace directive
// in a copy of helmstore's go.mod that go list and go test use through
// -modfile (helmstore's own go.mod is never touched). The link lives in a
// directory that outlasts the run (the user's cache), so that the go
// build cache recognises Helm's packages, compiled from that path, on the
// next run; in a temporary directory, every run would compile Helm again.

// helmModule is where Helm's module is, for one run.
type helmModule struct {
	version string // the version go.mod requires
	cache   string // its directory in the module cache
	link    string // the link to cache that the builds use
	modfile string // the copy of go.mod that replaces Helm's module by link
}

// linkHelm finds the version of Helm h that go.mod requires in the module
// cache, links linkDir/<module>@<version> to it (replacing a stale link),
// and writes into dir a go.mod and go.sum, copies of helmstore's, with
// Helm's module replaced by the link.
func linkHelm(g *goTool, h helmVersion, linkDir, dir string) (*helmModule, error) {
	out, err := g.run("list", "-m", "-json", h.module)
	if err != nil {
		return nil, err
	}
	var m struct {
		Version, Dir, GoMod string
		Replace             *struct{ Path string }
	}
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("go list -m %s: %w", h.module, err)
	}
	if m.Replace != nil || m.Dir == "" {
		return nil, fmt.Errorf("go list -m %s: not a module in the module cache (replaced: %v; dir %q): run go mod download", h.module, m.Replace != nil, m.Dir)
	}
	hm := &helmModule{version: m.Version, cache: m.Dir, modfile: filepath.Join(dir, "go.mod")}
	hm.link = filepath.Join(linkDir, strings.ReplaceAll(h.module, "/", "_")+"@"+m.Version)
	if err := symlink(m.Dir, hm.link); err != nil {
		return nil, err
	}
	mod, err := os.ReadFile(g.gomod)
	if err != nil {
		return nil, err
	}
	sum, err := os.ReadFile(strings.TrimSuffix(g.gomod, ".mod") + ".sum")
	if err != nil {
		return nil, err
	}
	mod = fmt.Appendf(mod, "\nreplace %s => %s\n", h.module, strconv.Quote(hm.link))
	if err := os.WriteFile(hm.modfile, mod, 0o644); err != nil {
		return nil, err
	}
	return hm, os.WriteFile(filepath.Join(dir, "go.sum"), sum, 0o644)
}

// symlink makes link a symbolic link to target, unless it is one already;
// it replaces whatever else is there atomically, so that runs at the same
// time agree.
func symlink(target, link string) error {
	if got, err := os.Readlink(link); err == nil && got == target {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", link, os.Getpid())
	os.Remove(tmp)
	if err := os.Symlink(target, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// linkDir returns the directory for the links to Helm's modules: in the
// user's cache ($XDG_CACHE_HOME or ~/.cache), else fallback.
func linkDir(fallback string) string {
	dir, err := os.UserCacheDir()
	if err != nil || dir == "" {
		return fallback
	}
	return filepath.Join(dir, "helmstore", "helmsuites")
}
