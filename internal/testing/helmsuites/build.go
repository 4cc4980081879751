package helmsuites

import (
	"path"
	"path/filepath"
)

// compile builds the test binaries of h's packages with overlay o into
// dir, in one go test -c, and returns each binary's path by import path.
func compile(g *goTool, h helmVersion, o *overlay, dir string) (map[string]string, error) {
	// -ldflags=-w: no DWARF, which a test binary does not need and which
	// takes a third of the time of linking these (100+ MB).
	args := []string{"test", "-c", "-vet=off", "-ldflags=-w", "-overlay", o.path, "-o", dir + string(filepath.Separator)}
	bins := map[string]string{}
	for _, p := range h.packages {
		args = append(args, h.pkg(p))
		bins[h.pkg(p)] = filepath.Join(dir, path.Base(p)+".test")
	}
	if _, err := g.run(args...); err != nil {
		return nil, err
	}
	return bins, nil
}
