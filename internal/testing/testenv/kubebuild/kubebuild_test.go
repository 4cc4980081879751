package kubebuild

import (
	"path/filepath"
	"strings"
	"testing"
)

// The progress lines count go build -v's packages and downloads, and a
// failure shows the compiler's errors, not the package list.
func TestBuildOutput(t *testing.T) {
	o := &buildOutput{}
	for _, chunk := range []string{
		"go: downloading k8s.io/api v0.34.3\n",
		"k8s.io/apimachinery/pkg/util/sets\nk8s.io/api/co",
		"re/v1\n# k8s.io/kubernetes/pkg/x\npkg/x/x.go:3:2: undefined: y\n",
	} {
		o.Write([]byte(chunk))
	}
	if mods, pkgs := o.counts(); mods != 1 || pkgs != 2 {
		t.Fatalf("counted %d modules, %d packages; want 1, 2", mods, pkgs)
	}
	got := o.errors(1000)
	if strings.Contains(got, "k8s.io/api/core/v1") || !strings.Contains(got, "undefined: y") || !strings.Contains(got, "# k8s.io/kubernetes/pkg/x") {
		t.Fatalf("errors():\n%s", got)
	}
}

func TestLDFlags(t *testing.T) {
	if f := kubeLDFlags("v1.34.3"); !strings.Contains(f, "gitMajor=1 ") || !strings.Contains(f, "gitMinor=34 ") || !strings.Contains(f, "gitVersion=v1.34.3 ") {
		t.Fatal(f)
	}
}

// Each tool's module is found, its version read from its go.mod, and its
// cache directory named after it.
func TestLocate(t *testing.T) {
	for _, tl := range []*tool{etcdTool, kubeTool} {
		b, err := tl.locate()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(filepath.Base(b.dir), tl.name+"-") || !strings.HasPrefix(b.version, "v") {
			t.Fatalf("%s: cache directory %s, version %q", tl.name, b.dir, b.version)
		}
	}
}
