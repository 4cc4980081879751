package drivertest

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/releasecheck"
)

func mustCreate(t *testing.T, s helm3.Store, r *release.Release) {
	t.Helper()
	if err := s.Create(key(r.Name, r.Version), r); err != nil {
		t.Fatalf("create %s: %v", key(r.Name, r.Version), err)
	}
}

func wantErr(t *testing.T, what string, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("%s: got error %v, want %v", what, err, target)
	}
}

// wantSentinel fails unless err is target itself: Helm's drivers return
// ErrReleaseNotFound and ErrReleaseExists bare, and tools (Helm's own
// action tests among them) compare them with ==.
func wantSentinel(t *testing.T, what string, err, target error) {
	t.Helper()
	if err != target {
		t.Fatalf("%s: got error %v, want exactly %v (err == %[2]v, as Helm's drivers return it)", what, err, target)
	}
}

func testContract(t *testing.T, h Harness) {
	t.Run("CreateGet", func(t *testing.T) {
		s := h.open(t)
		r := rel("app", "default", 1, release.StatusDeployed)
		r.Labels = map[string]string{"team": "a", "tier": "backend"}
		mustCreate(t, s, r)
		got, err := s.Get(key("app", 1))
		if err != nil {
			t.Fatal(err)
		}
		sameRelease(t, "get", got, r)
		if !reflect.DeepEqual(got.Labels, map[string]string{"team": "a", "tier": "backend"}) {
			t.Fatalf("get returned labels %v, want only the custom labels", got.Labels)
		}
	})
	t.Run("CreateExisting", func(t *testing.T) {
		s := h.open(t)
		r := rel("app", "default", 1, release.StatusDeployed)
		mustCreate(t, s, r)
		r2 := rel("app", "default", 1, release.StatusFailed)
		wantSentinel(t, "second create", s.Create(key("app", 1), r2), helm3.ErrReleaseExists)
		got, err := s.Get(key("app", 1))
		if err != nil {
			t.Fatal(err)
		}
		sameRelease(t, "after refused create", got, r)
	})
	t.Run("GetMissingAndInvalid", func(t *testing.T) {
		s := h.open(t)
		_, err := s.Get(key("nope", 1))
		wantSentinel(t, "get missing", err, helm3.ErrReleaseNotFound)
		for _, k := range []string{"", "sh.helm.release.v1.app", "sh.helm.release.v1.app.vX", "not-a-key.v1"} {
			_, err := s.Get(k)
			wantErr(t, "get "+strconv.Quote(k), err, helm3.ErrInvalidKey)
		}
	})
	t.Run("Update", func(t *testing.T) {
		s := h.open(t)
		r := rel("app", "default", 1, release.StatusDeployed)
		r.Labels = map[string]string{"keep": "no"}
		mustCreate(t, s, r)
		u := rel("app", "default", 1, release.StatusSuperseded)
		u.Info.Description = "Superseded by 2"
		u.Labels = map[string]string{"changed": "yes"}
		if err := s.Update(key("app", 1), u); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get(key("app", 1))
		if err != nil {
			t.Fatal(err)
		}
		sameRelease(t, "get after update", got, u)
		if _, err := s.Query(map[string]string{"keep": "no"}); err != helm3.ErrReleaseNotFound {
			t.Fatalf("query by a label the update removed: got %v, want ErrReleaseNotFound", err)
		}
		rs, err := s.Query(map[string]string{"status": "superseded"})
		if err != nil || len(rs) != 1 {
			t.Fatalf("query by updated status: %d releases, %v", len(rs), err)
		}
		if rs[0].Labels["modifiedAt"] == "" || rs[0].Labels["createdAt"] == "" {
			t.Fatalf("queried labels %v lack createdAt/modifiedAt after an update", rs[0].Labels)
		}
	})
	t.Run("UpdateMissing", func(t *testing.T) {
		s := h.open(t)
		err := s.Update(key("ghost", 1), rel("ghost", "default", 1, release.StatusDeployed))
		wantSentinel(t, "update missing", err, helm3.ErrReleaseNotFound)
		if _, err := s.Get(key("ghost", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("update of a missing release created it (get: %v)", err)
		}
	})
	t.Run("Delete", func(t *testing.T) {
		s := h.open(t)
		r := rel("app", "default", 1, release.StatusDeployed)
		r.Labels = map[string]string{"team": "a"}
		mustCreate(t, s, r)
		mustCreate(t, s, rel("app", "default", 2, release.StatusDeployed))
		got, err := s.Delete(key("app", 1))
		if err != nil {
			t.Fatal(err)
		}
		sameRelease(t, "deleted release", got, r)
		_, err = s.Get(key("app", 1))
		wantSentinel(t, "get after delete", err, helm3.ErrReleaseNotFound)
		_, err = s.Delete(key("app", 1))
		wantSentinel(t, "delete again", err, helm3.ErrReleaseNotFound)
		if _, err := s.Get(key("app", 2)); err != nil {
			t.Fatalf("deleting v1 damaged v2: %v", err)
		}
	})
	t.Run("ListFilterAndLabels", func(t *testing.T) {
		s := h.open(t)
		a := rel("a", "default", 1, release.StatusSuperseded)
		a.Labels = map[string]string{"team": "x"}
		mustCreate(t, s, a)
		mustCreate(t, s, rel("a", "default", 2, release.StatusDeployed))
		mustCreate(t, s, rel("b", "default", 1, release.StatusFailed))
		all, err := s.List(func(*release.Release) bool { return true })
		if err != nil || len(all) != 3 {
			t.Fatalf("list all: %d releases, %v", len(all), err)
		}
		for _, r := range all {
			want := map[string]string{"name": r.Name, "owner": "helm", "status": r.Info.Status.String(), "version": strconv.Itoa(r.Version)}
			for k, v := range want {
				if r.Labels[k] != v {
					t.Fatalf("list: %s label %s=%q, want %q (all labels %v)", key(r.Name, r.Version), k, r.Labels[k], v, r.Labels)
				}
			}
			if r.Name == "a" && r.Version == 1 && r.Labels["team"] != "x" {
				t.Fatalf("list lost a custom label: %v", r.Labels)
			}
			if r.Chart == nil || r.Chart.Metadata.Name != "demo" || r.Manifest == "" {
				t.Fatalf("list returned an incomplete release %s", brief(r))
			}
		}
		dep, err := s.List(func(r *release.Release) bool { return r.Info.Status == release.StatusDeployed })
		if err != nil || joinKeys(dep) != "default/"+key("a", 2) {
			t.Fatalf("list deployed: %s, %v", joinKeys(dep), err)
		}
		none, err := s.List(func(*release.Release) bool { return false })
		if err != nil || len(none) != 0 {
			t.Fatalf("list none: %d, %v", len(none), err)
		}
	})
	t.Run("Query", func(t *testing.T) {
		s := h.open(t)
		a1 := rel("a", "default", 1, release.StatusSuperseded)
		a1.Labels = map[string]string{"team": "x", "env": "prod"}
		mustCreate(t, s, a1)
		a2 := rel("a", "default", 2, release.StatusDeployed)
		a2.Labels = map[string]string{"team": "x", "env": "dev"}
		mustCreate(t, s, a2)
		mustCreate(t, s, rel("b", "default", 1, release.StatusDeployed))
		cases := []struct {
			labels map[string]string
			want   string
		}{
			{map[string]string{"name": "a", "owner": "helm"}, "default/" + key("a", 1) + " default/" + key("a", 2)},
			{map[string]string{"name": "a", "owner": "helm", "status": "deployed"}, "default/" + key("a", 2)},
			{map[string]string{"status": "deployed"}, "default/" + key("a", 2) + " default/" + key("b", 1)},
			{map[string]string{"version": "1"}, "default/" + key("a", 1) + " default/" + key("b", 1)},
			{map[string]string{"team": "x"}, "default/" + key("a", 1) + " default/" + key("a", 2)},
			{map[string]string{"team": "x", "env": "prod"}, "default/" + key("a", 1)},
			{map[string]string{"team": "x", "status": "deployed"}, "default/" + key("a", 2)},
			{map[string]string{}, "default/" + key("a", 1) + " default/" + key("a", 2) + " default/" + key("b", 1)},
		}
		for _, c := range cases {
			rs, err := s.Query(c.labels)
			if err != nil || joinKeys(rs) != c.want {
				t.Fatalf("query %v: got %q, %v; want %q", c.labels, joinKeys(rs), err, c.want)
			}
			for _, r := range rs {
				if r.Labels["owner"] != "helm" || r.Labels["name"] != r.Name {
					t.Fatalf("query %v: labels %v lack system labels", c.labels, r.Labels)
				}
			}
		}
		for _, miss := range []map[string]string{
			{"name": "c"}, {"owner": "someone-else"}, {"version": "01"}, {"team": "y"}, {"name": "a", "status": "failed"},
		} {
			// Exactly the sentinel: `helm upgrade --install` compares with ==.
			if _, err := s.Query(miss); err != helm3.ErrReleaseNotFound {
				t.Fatalf("query %v: got %v, want exactly ErrReleaseNotFound", miss, err)
			}
		}
		if _, err := s.Query(map[string]string{"team": "not a valid label value!"}); err == nil || errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("query with an invalid label value: got %v, want a validation error", err)
		}
	})
	t.Run("Namespaces", func(t *testing.T) {
		s := h.open(t)
		ta, tb, all := s.Namespace("team-a"), s.Namespace("team-b"), s.Namespace("")
		mustCreate(t, ta, rel("app", "team-a", 1, release.StatusDeployed))
		mustCreate(t, tb, rel("app", "team-b", 1, release.StatusDeployed))
		mustCreate(t, tb, rel("other", "team-b", 1, release.StatusDeployed))
		// A second release with the same key in another namespace is not a conflict.
		if got, err := ta.Get(key("app", 1)); err != nil || got.Namespace != "team-a" {
			t.Fatalf("team-a get: %v %v", brief(got), err)
		}
		if _, err := ta.Get(key("other", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("team-a sees team-b's release: %v", err)
		}
		if rs, _ := ta.List(func(*release.Release) bool { return true }); joinKeys(rs) != "team-a/"+key("app", 1) {
			t.Fatalf("team-a list: %s", joinKeys(rs))
		}
		if _, err := ta.Query(map[string]string{"name": "other"}); err != helm3.ErrReleaseNotFound {
			t.Fatalf("team-a query finds team-b's release: %v", err)
		}
		if _, err := ta.Delete(key("other", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("team-a deletes team-b's release: %v", err)
		}
		if err := ta.Update(key("other", 1), rel("other", "team-a", 1, release.StatusFailed)); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("team-a updates team-b's release: %v", err)
		}
		// A release of another namespace is stored in the view's, as
		// Helm's Secrets driver stores it (Flux's storage namespace).
		x := rel("x", "team-b", 1, release.StatusDeployed)
		mustCreate(t, ta, x)
		if got, err := ta.Get(key("x", 1)); err != nil || got.Namespace != "team-b" {
			t.Fatalf("team-a get of a release of team-b stored there: %v %v", brief(got), err)
		}
		if _, err := tb.Get(key("x", 1)); err != helm3.ErrReleaseNotFound {
			t.Fatalf("team-b sees a release stored in team-a: %v", err)
		}
		if _, err := ta.Delete(key("x", 1)); err != nil {
			t.Fatal(err)
		}
		if got, err := tb.Get(key("other", 1)); err != nil || got.Info.Status != release.StatusDeployed {
			t.Fatalf("team-b's release was changed through team-a: %v %v", brief(got), err)
		}
		rs, err := all.List(func(*release.Release) bool { return true })
		if err != nil || joinKeys(rs) != "team-a/"+key("app", 1)+" team-b/"+key("app", 1)+" team-b/"+key("other", 1) {
			t.Fatalf("all-namespaces list: %s, %v", joinKeys(rs), err)
		}
		if rs, err := all.Query(map[string]string{"name": "app"}); err != nil || len(rs) != 2 {
			t.Fatalf("all-namespaces query: %s, %v", joinKeys(rs), err)
		}
		if got, err := all.Get(key("other", 1)); err != nil || got.Namespace != "team-b" {
			t.Fatalf("all-namespaces get of a unique key: %v %v", brief(got), err)
		}
		// A release without a namespace is stored in the view's.
		r := rel("nons", "", 1, release.StatusDeployed)
		mustCreate(t, ta, r)
		if got, err := ta.Get(key("nons", 1)); err != nil {
			t.Fatalf("release created without namespace: %v", err)
		} else {
			sameRelease(t, "release created without namespace", got, r)
		}
	})
	t.Run("SystemLabelsCannotBeOverridden", func(t *testing.T) {
		s := h.open(t)
		r := rel("app", "default", 1, release.StatusDeployed)
		r.Labels = map[string]string{"status": "bogus", "owner": "me", "name": "other", "team": "a"}
		mustCreate(t, s, r)
		got, err := s.Get(key("app", 1))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Labels, map[string]string{"team": "a"}) {
			t.Fatalf("get labels %v, want only the custom label", got.Labels)
		}
		rs, err := s.Query(map[string]string{"status": "deployed", "name": "app", "owner": "helm"})
		if err != nil || len(rs) != 1 {
			t.Fatalf("system labels were overridden by custom ones: %d, %v", len(rs), err)
		}
	})
	t.Run("BadInput", func(t *testing.T) {
		s := h.open(t)
		long := strings.Repeat("x", 64)
		bad := map[string]func() error{
			"nil release":  func() error { return s.Create(key("a", 1), nil) },
			"key mismatch": func() error { return s.Create(key("a", 2), rel("a", "default", 1, release.StatusDeployed)) },
			"invalid key":  func() error { return s.Create("a.v1", rel("a", "default", 1, release.StatusDeployed)) },
			"no info":      func() error { r := rel("a", "default", 1, ""); r.Info = nil; return s.Create(key("a", 1), r) },
			"invalid name": func() error {
				return s.Create(key("Bad_Name", 1), rel("Bad_Name", "default", 1, release.StatusDeployed))
			},
			"long label value": func() error {
				r := rel("a", "default", 1, release.StatusDeployed)
				r.Labels = map[string]string{"k": long}
				return s.Create(key("a", 1), r)
			},
			"bad label key": func() error {
				r := rel("a", "default", 1, release.StatusDeployed)
				r.Labels = map[string]string{"a b": "c"}
				return s.Create(key("a", 1), r)
			},
			"update nil": func() error { return s.Update(key("a", 1), nil) },
		}
		for name, fn := range bad {
			err := fn()
			if err == nil {
				t.Fatalf("%s: no error", name)
			}
			if name != "nil release" && name != "update nil" && !strings.Contains(err.Error(), "sh.helm.release.v1.") && !strings.Contains(err.Error(), `"a.v1"`) {
				t.Fatalf("%s: error %q does not name the release", name, err)
			}
		}
		if rs, _ := s.Namespace("").List(func(*release.Release) bool { return true }); len(rs) != 0 {
			t.Fatalf("bad input stored releases: %s", joinKeys(rs))
		}
	})
	t.Run("NoAliasing", func(t *testing.T) {
		s := h.open(t)
		r := rel("app", "default", 1, release.StatusDeployed)
		want := releasecheck.Normalize(t, r)
		mustCreate(t, s, r)
		r.Info.Status = release.StatusFailed
		r.Config["greeting"] = "mutated"
		r.Chart.Templates[0].Data[0] = '#'
		got, err := s.Get(key("app", 1))
		if err != nil {
			t.Fatal(err)
		}
		sameRelease(t, "after mutating the created release", got, want)
		got.Chart.Values["greeting"] = "mutated"
		got.Chart.Templates[0].Data[0] = '#'
		again, _ := s.Get(key("app", 1))
		sameRelease(t, "after mutating a returned release", again, want)

		// Releases one call returns may share their chart's values and
		// bytes (as Helm's Memory driver shares objects), but never with
		// what another call returns.
		r2 := rel("app", "default", 2, release.StatusDeployed)
		want2 := releasecheck.Normalize(t, r2)
		mustCreate(t, s, r2)
		hist, err := s.Query(map[string]string{"name": "app", "owner": "helm"})
		if err != nil || len(hist) != 2 {
			t.Fatalf("query: %d releases, %v", len(hist), err)
		}
		for _, r := range hist {
			r.Chart.Values["greeting"] = "mutated"
			r.Chart.Templates[0].Data[0] = '#'
		}
		for _, c := range []struct {
			k    string
			want *release.Release
		}{{key("app", 1), want}, {key("app", 2), want2}} {
			got, err := s.Get(c.k)
			if err != nil {
				t.Fatal(err)
			}
			sameRelease(t, "after mutating the releases a query returned", got, c.want)
		}
	})
	t.Run("VersionZero", func(t *testing.T) {
		// Helm never makes a revision 0, but its Memory, Secrets and SQL
		// drivers store one and give it back (a migration may bring one):
		// so does every store, in version order.
		s := h.open(t)
		zero := rel("app", "default", 0, release.StatusSuperseded)
		zero.Labels = map[string]string{"team": "x"}
		mustCreate(t, s, zero)
		mustCreate(t, s, rel("app", "default", 1, release.StatusDeployed))
		got, err := s.Get(key("app", 0))
		if err != nil {
			t.Fatalf("get revision 0: %v", err)
		}
		sameRelease(t, "get revision 0", got, zero)
		wantSentinel(t, "create revision 0 again", s.Create(key("app", 0), zero), helm3.ErrReleaseExists)
		rs, err := s.Query(map[string]string{"version": "0"})
		if err != nil || joinKeys(rs) != "default/"+key("app", 0) {
			t.Fatalf("query version=0: %q, %v", joinKeys(rs), err)
		}
		st := storage.Init(s)
		hist, err := st.History("app")
		if err != nil || joinKeys(hist) != "default/"+key("app", 0)+" default/"+key("app", 1) {
			t.Fatalf("history: %q, %v", joinKeys(hist), err)
		}
		if last, err := st.Last("app"); err != nil || last.Version != 1 {
			t.Fatalf("last: %v, %v", brief(last), err)
		}
		u := rel("app", "default", 0, release.StatusFailed)
		if err := s.Update(key("app", 0), u); err != nil {
			t.Fatalf("update revision 0: %v", err)
		}
		if got, err = s.Get(key("app", 0)); err != nil {
			t.Fatal(err)
		}
		sameRelease(t, "revision 0 after update", got, u)
		if got, err = s.Namespace("").Delete(key("app", 0)); err != nil {
			t.Fatalf("delete revision 0: %v", err)
		}
		sameRelease(t, "deleted revision 0", got, u)
		_, err = s.Get(key("app", 0))
		wantSentinel(t, "get revision 0 after delete", err, helm3.ErrReleaseNotFound)
		if rs, err := s.List(func(*release.Release) bool { return true }); err != nil || joinKeys(rs) != "default/"+key("app", 1) {
			t.Fatalf("list after deleting revision 0: %q, %v", joinKeys(rs), err)
		}
	})
	t.Run("HelmStorage", func(t *testing.T) {
		// Helm's storage layer on top of the driver: History, Deployed,
		// and the "not found" sentinel that `helm upgrade --install` needs.
		s := h.open(t)
		st := storage.Init(s)
		if _, err := st.History("app"); err != helm3.ErrReleaseNotFound {
			t.Fatalf("history of an unknown release: %v, want exactly ErrReleaseNotFound", err)
		}
		for v := 1; v <= 3; v++ {
			status := release.StatusSuperseded
			if v == 3 {
				status = release.StatusDeployed
			}
			if err := st.Create(rel("app", "default", v, status)); err != nil {
				t.Fatal(err)
			}
		}
		hist, err := st.History("app")
		if err != nil || len(hist) != 3 {
			t.Fatalf("history: %d, %v", len(hist), err)
		}
		dep, err := st.Deployed("app")
		if err != nil || dep.Version != 3 {
			t.Fatalf("deployed: %v, %v", brief(dep), err)
		}
		last, err := st.Last("app")
		if err != nil || last.Version != 3 {
			t.Fatalf("last: %v, %v", brief(last), err)
		}
	})
}
