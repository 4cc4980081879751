package drivertest

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/helmstore/helmstore/internal/testing/releasecheck"
)

// flowActions are the steps of the action flows, run through one Helm
// version's action package (with its fake Kubernetes client, as Helm's own
// action tests use) over one driver scoped to a namespace: actions3.go,
// actions4.go.
type flowActions interface {
	install(name, ns string, ch *chart.Chart, vals map[string]interface{}) error
	upgrade(name, ns string, ch *chart.Chart, vals map[string]interface{}, maxHistory int) error
	rollback(name string, version, maxHistory int) error
	uninstall(name string, keepHistory bool) error
	// listAll is helm list -A --all: "namespace/name vN status" each.
	listAll() ([]string, error)
	// history is the number of revisions of name Helm's history action
	// finds.
	history(name string) (int, error)
	// stored is every release the driver holds (an all-namespaces view's),
	// one line each as flowLine renders it, sorted.
	stored(t *testing.T) []string
}

// flowSide is one of the two stores a flow runs on.
type flowSide struct {
	name string
	at   func(ns string) flowActions
}

// flowLine renders r, a stored release, for comparing flows: canon's line
// with the times that depend on the run zeroed.
func flowLine(t *testing.T, r *release.Release) string {
	t.Helper()
	n := releasecheck.Normalize(t, r)
	n.Labels = customOnly(r.Labels)
	n.Info.FirstDeployed, n.Info.LastDeployed, n.Info.Deleted = helmtime.Time{}, helmtime.Time{}, helmtime.Time{}
	for _, h := range n.Hooks {
		h.LastRun = release.HookExecution{}
	}
	return canonLine(n, encode(t, n))
}

// testActionFlows runs install, upgrades with MaxHistory, rollback,
// uninstall and list across namespaces through the action package of the
// face's Helm, on the store and on that Helm's Memory driver, comparing
// what they store after every step.
func testActionFlows(t *testing.T, h Harness) {
	s := h.open(t)
	mem := h.newMemory()
	f := h.face()
	sides := []flowSide{
		{"store", func(ns string) flowActions { return f.actions(s.Namespace(ns)) }},
		{"Helm's Memory driver", func(ns string) flowActions { return f.actions(mem.Namespace(ns)) }},
	}
	ch := testChart("flow", "1.0.0")
	vals := func(i int) map[string]interface{} {
		return map[string]interface{}{"greeting": fmt.Sprintf("hello-%d", i)}
	}

	type step struct {
		name string
		run  func(side flowSide) error
	}
	install := func(name, ns string, i int) step {
		return step{fmt.Sprintf("install %s/%s", ns, name), func(side flowSide) error {
			return side.at(ns).install(name, ns, ch, vals(i))
		}}
	}
	upgrade := func(name, ns string, i int) step {
		return step{fmt.Sprintf("upgrade %s/%s #%d", ns, name, i), func(side flowSide) error {
			return side.at(ns).upgrade(name, ns, ch, vals(i), 10)
		}}
	}
	steps := []step{install("app", "team-a", 0)}
	for i := 1; i <= 12; i++ {
		steps = append(steps, upgrade("app", "team-a", i))
	}
	steps = append(steps,
		step{"rollback team-a/app to 8", func(side flowSide) error {
			return side.at("team-a").rollback("app", 8, 10)
		}},
		install("db", "team-b", 0),
		upgrade("db", "team-b", 1),
		step{"uninstall team-b/db keeping history", func(side flowSide) error {
			return side.at("team-b").uninstall("db", true)
		}},
		install("web", "team-b", 5),
		step{"uninstall team-a/app", func(side flowSide) error {
			return side.at("team-a").uninstall("app", false)
		}},
		install("app", "team-a", 20),
	)
	for _, st := range steps {
		for _, side := range sides {
			if err := st.run(side); err != nil {
				t.Fatalf("%s on %s: %v", st.name, side.name, err)
			}
		}
		got, want := sides[0].at("").stored(t), sides[1].at("").stored(t)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after %s the stored releases differ\nstore:  %s\nmemory: %s", st.name, strings.Join(got, "\n        "), strings.Join(want, "\n        "))
		}
	}
	// The end state, by Helm's own list across namespaces.
	for _, side := range sides {
		got, err := side.at("").listAll()
		if err != nil {
			t.Fatalf("%s: helm list -A: %v", side.name, err)
		}
		sort.Strings(got)
		want := []string{"team-a/app v1 deployed", "team-b/db v2 uninstalled", "team-b/web v1 deployed"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: helm list -A = %v, want %v", side.name, got, want)
		}
	}
	// The history MaxHistory left, by Helm's own history action.
	if n, err := sides[0].at("team-b").history("db"); err != nil || n != 2 {
		t.Fatalf("history of team-b/db: %d revisions, %v", n, err)
	}
}

// allReleases lists every release d holds, for flowActions.stored.
func allReleases(t *testing.T, what string, d helmdriver.Driver) []*release.Release {
	t.Helper()
	rs, err := d.List(func(*release.Release) bool { return true })
	if err != nil {
		t.Fatalf("%s: list all: %v", what, err)
	}
	return rs
}
