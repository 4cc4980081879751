package drivertest

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/helmstore/helmstore/helm3"
)

// storageNamespace is where StorageNamespace's driver stores releases.
const storageNamespace = "flux-system"

// testStorageNamespace runs Helm's actions as Flux's helm-controller does:
// a configuration whose driver is scoped to one namespace (the storage
// namespace, flux-system) installing, upgrading, rolling back and
// uninstalling releases of other namespaces (the target namespaces), on
// the store and on the face's Helm's Secrets driver, which stores every
// release in its client's namespace whatever the release's own. What they
// store, helm list -A and helm history must be the same after every step;
// the store keeps the releases in the storage namespace alone, and its
// summary listing shows each release's own namespace, as helm list does.
func testStorageNamespace(t *testing.T, h Harness) {
	const storage = storageNamespace
	s := h.open(t)
	f := h.face()
	sides := []struct {
		name string
		a    flowActions
	}{
		{"store", f.actions(s.Namespace(storage))},
		{"Helm's Secrets driver", f.secrets(fake.NewClientset().CoreV1().Secrets(storage))},
	}
	ch := testChart("flux", "1.0.0")
	vals := func(i int) map[string]interface{} { return map[string]interface{}{"replicas": i} }
	steps := []struct {
		name string
		run  func(a flowActions) error
	}{
		{"install apps/app", func(a flowActions) error { return a.install("app", "apps", ch, vals(1)) }},
		{"upgrade apps/app #2", func(a flowActions) error { return a.upgrade("app", "apps", ch, vals(2), 3) }},
		{"upgrade apps/app #3", func(a flowActions) error { return a.upgrade("app", "apps", ch, vals(3), 3) }},
		{"upgrade apps/app #4", func(a flowActions) error { return a.upgrade("app", "apps", ch, vals(4), 3) }},
		{"rollback apps/app to 3", func(a flowActions) error { return a.rollback("app", 3, 3) }},
		{"install web/db", func(a flowActions) error { return a.install("db", "web", ch, vals(1)) }},
		{"install flux-system/own", func(a flowActions) error { return a.install("own", storage, ch, vals(1)) }},
		{"uninstall web/db keeping history", func(a flowActions) error { return a.uninstall("db", true) }},
		{"uninstall apps/app", func(a flowActions) error { return a.uninstall("app", false) }},
		{"install apps/app again", func(a flowActions) error { return a.install("app", "apps", ch, vals(9)) }},
	}
	for _, st := range steps {
		for _, side := range sides {
			if err := st.run(side.a); err != nil {
				t.Fatalf("%s on %s: %v", st.name, side.name, err)
			}
		}
		if got, want := sides[0].a.stored(t), sides[1].a.stored(t); !reflect.DeepEqual(got, want) {
			t.Fatalf("after %s the stored releases differ\nstore:   %s\nsecrets: %s", st.name, strings.Join(got, "\n         "), strings.Join(want, "\n         "))
		}
	}
	want := []string{"apps/app v1 deployed", "flux-system/own v1 deployed", "web/db v1 uninstalled"}
	for _, side := range sides {
		got, err := side.a.listAll()
		sort.Strings(got)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: helm list -A = %v, %v; want %v", side.name, got, err, want)
		}
	}
	// Stored in flux-system, nowhere else.
	for _, ns := range []string{"apps", "web"} {
		if rs, err := s.Namespace(ns).List(func(*release.Release) bool { return true }); err != nil || len(rs) != 0 {
			t.Errorf("the store's %s holds %d releases (%v); want none: they are stored in %s", ns, len(rs), err, storage)
		}
	}
	ctx := context.Background()
	st, err := s.Namespace(storage).Stats(ctx)
	if err != nil || st.Releases != 3 {
		t.Errorf("stats of %s: %d revisions, %v; want 3", storage, st.Releases, err)
	}
	// The summary listing, of the storage namespace and of all, shows
	// each release's own namespace, and no label of helmstore's.
	for _, view := range []string{storage, ""} {
		p, err := s.Namespace(view).Summaries(ctx, helm3.SummaryQuery{})
		if err != nil {
			t.Fatalf("summaries of %q: %v", view, err)
		}
		var got []string
		for _, sum := range p.Summaries {
			got = append(got, fmt.Sprintf("%s/%s v%d %s", sum.Namespace, sum.Name, sum.Revision, sum.Status))
			if len(sum.Labels) != 0 {
				t.Errorf("summaries of %q: %s/%s has labels %v; want none", view, sum.Namespace, sum.Name, sum.Labels)
			}
		}
		sort.Strings(got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("summaries of %q: %v; want %v", view, got, want)
		}
	}
	// Get through the storage namespace returns the release as written,
	// its own namespace and no label of helmstore's.
	r, err := s.Namespace(storage).Get("sh.helm.release.v1.app.v1")
	if err != nil || r.Namespace != "apps" || len(r.Labels) != 0 {
		t.Errorf("get of apps/app through %s: %v, %v; want namespace apps, no labels", storage, brief(r), err)
	}
}
