package drivertest

import (
	"fmt"
	"io"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/helmstore/helmstore/internal/releasecheck"
)

// actionConfig is a Helm action configuration over driver d with a fake
// Kubernetes client, as Helm's own action tests use.
func actionConfig(d helmdriver.Driver) *action.Configuration {
	return &action.Configuration{
		Releases:     storage.Init(d),
		KubeClient:   &kubefake.PrintingKubeClient{Out: io.Discard},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...interface{}) {},
	}
}

// flowSide is one of the two stores a flow runs on.
type flowSide struct {
	name string
	view func(ns string) helmdriver.Driver
}

// snapshot lists every stored release with run-dependent times zeroed.
func snapshot(t *testing.T, side flowSide) []string {
	t.Helper()
	rs, err := side.view("").List(func(*release.Release) bool { return true })
	if err != nil {
		t.Fatalf("%s: list all: %v", side.name, err)
	}
	for i, r := range rs {
		n := releasecheck.Normalize(t, r)
		n.Labels = customOnly(r.Labels)
		n.Info.FirstDeployed, n.Info.LastDeployed, n.Info.Deleted = helmtime.Time{}, helmtime.Time{}, helmtime.Time{}
		for _, h := range n.Hooks {
			h.LastRun = release.HookExecution{}
		}
		rs[i] = n
	}
	return canon(t, rs)
}

func testActionFlows(t *testing.T, h Harness) {
	s := h.open(t)
	mem := newMemory()
	sides := []flowSide{
		{"store", func(ns string) helmdriver.Driver { return s.Namespace(ns) }},
		{"Helm's Memory driver", func(ns string) helmdriver.Driver { return mem.Namespace(ns) }},
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
			a := action.NewInstall(actionConfig(side.view(ns)))
			a.ReleaseName, a.Namespace = name, ns
			_, err := a.Run(ch, vals(i))
			return err
		}}
	}
	upgrade := func(name, ns string, i int) step {
		return step{fmt.Sprintf("upgrade %s/%s #%d", ns, name, i), func(side flowSide) error {
			a := action.NewUpgrade(actionConfig(side.view(ns)))
			a.Namespace, a.MaxHistory = ns, 10
			_, err := a.Run(name, ch, vals(i))
			return err
		}}
	}
	steps := []step{install("app", "team-a", 0)}
	for i := 1; i <= 12; i++ {
		steps = append(steps, upgrade("app", "team-a", i))
	}
	steps = append(steps,
		step{"rollback team-a/app to 8", func(side flowSide) error {
			a := action.NewRollback(actionConfig(side.view("team-a")))
			a.Version, a.MaxHistory = 8, 10
			return a.Run("app")
		}},
		install("db", "team-b", 0),
		upgrade("db", "team-b", 1),
		step{"uninstall team-b/db keeping history", func(side flowSide) error {
			a := action.NewUninstall(actionConfig(side.view("team-b")))
			a.KeepHistory = true
			_, err := a.Run("db")
			return err
		}},
		install("web", "team-b", 5),
		step{"uninstall team-a/app", func(side flowSide) error {
			_, err := action.NewUninstall(actionConfig(side.view("team-a"))).Run("app")
			return err
		}},
		install("app", "team-a", 20),
	)
	for _, st := range steps {
		for _, side := range sides {
			if err := st.run(side); err != nil {
				t.Fatalf("%s on %s: %v", st.name, side.name, err)
			}
		}
		got, want := snapshot(t, sides[0]), snapshot(t, sides[1])
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("after %s the stored releases differ\nstore:  %s\nmemory: %s", st.name, strings.Join(got, "\n        "), strings.Join(want, "\n        "))
		}
	}
	// The end state, by Helm's own list across namespaces.
	for _, side := range sides {
		l := action.NewList(actionConfig(side.view("")))
		l.AllNamespaces, l.StateMask = true, action.ListAll
		rs, err := l.Run()
		if err != nil {
			t.Fatalf("%s: helm list -A: %v", side.name, err)
		}
		var got []string
		for _, r := range rs {
			got = append(got, fmt.Sprintf("%s/%s v%d %s", r.Namespace, r.Name, r.Version, r.Info.Status))
		}
		sort.Strings(got)
		want := []string{"team-a/app v1 deployed", "team-b/db v2 uninstalled", "team-b/web v1 deployed"}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: helm list -A = %v, want %v", side.name, got, want)
		}
	}
	// The history MaxHistory left, by Helm's own history action.
	hist, err := action.NewHistory(actionConfig(s.Namespace("team-b"))).Run("db")
	if err != nil || len(hist) != 2 {
		t.Fatalf("history of team-b/db: %d revisions, %v", len(hist), err)
	}
}
