package driver_test

import (
	"slices"
	"strings"
	"testing"
)

// The providers, which every tool links beside one face.
var providers = []string{"driver", "memstore", "sql", "sql/postgres", "sql/mysql", "sql/sqlite", "redis", "cosmos", "crsplit"}

// A Helm 4 tool links no Helm 3 package and a Helm 3 tool no Helm 4 one:
// each face, a tool importing it and every backend (examples/helm3driver and
// examples/helm4driver), and every provider, links only its own Helm (the
// providers link none). Each face does link its Helm's action package,
// so that the check can see what it looks for.
func TestFacesLinkOneHelm(t *testing.T) {
	t.Parallel()
	linked := goListDeps(t, append([]string{"helm3", "helm4", "examples/helm3driver", "examples/helm4driver"}, providers...)...)
	for _, c := range []struct {
		face, tool, own, other string
	}{
		{"helm3", "examples/helm3driver", "helm.sh/helm/v3/pkg/action", "helm.sh/helm/v4/"},
		{"helm4", "examples/helm4driver", "helm.sh/helm/v4/pkg/action", "helm.sh/helm/v3/"},
	} {
		if !slices.Contains(linked[c.face], c.own) {
			t.Errorf("%s links no %s: the check cannot see what it looks for", c.face, c.own)
		}
		for _, p := range append([]string{c.face, c.tool}, providers...) {
			deps, ok := linked[p]
			if !ok {
				t.Fatalf("go list gave no dependencies of %s", p)
			}
			var bad []string
			for _, d := range deps {
				if strings.HasPrefix(d, c.other) || p != c.face && p != c.tool && strings.HasPrefix(d, "helm.sh/") {
					bad = append(bad, d)
				}
			}
			if len(bad) > 0 {
				t.Errorf("%s (used with %s) links %d Helm packages it should not: %s", p, c.face, len(bad), strings.Join(bad[:min(len(bad), 8)], ", "))
			}
		}
	}
}
