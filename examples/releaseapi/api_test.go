package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"

	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/sql"
)

func TestAPI(t *testing.T) {
	store, err := helm3.Open(context.Background(), "sqlite", filepath.Join(t.TempDir(), "helm.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, r := range []struct {
		ns, name string
		v        int
		status   release.Status
	}{{"a", "web", 1, release.StatusSuperseded}, {"a", "web", 2, release.StatusDeployed}, {"b", "db", 1, release.StatusDeployed}, {"c", "api", 1, release.StatusFailed}} {
		rls := &release.Release{Name: r.name, Namespace: r.ns, Version: r.v, Config: map[string]interface{}{"v": r.v},
			Chart: &chart.Chart{Metadata: &chart.Metadata{Name: r.name, Version: "1.0.0", AppVersion: "2.0"}},
			Info:  &release.Info{Status: r.status}, Manifest: "kind: ConfigMap\n"}
		if r.name == "db" {
			rls.Labels = map[string]string{"team": "data"}
		}
		if err := storage.Init(store.Namespace(r.ns)).Create(rls); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer((&API{Store: store}).Handler())
	defer srv.Close()
	get := func(path string, v interface{}) int {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if v != nil && resp.StatusCode == 200 {
			json.NewDecoder(resp.Body).Decode(v)
		}
		return resp.StatusCode
	}
	var all Page
	if get("/releases", &all) != 200 || len(all.Releases) != 3 || all.Releases[0].Name != "web" || all.Releases[0].Revision != 2 ||
		all.Releases[0].Chart != "web-1.0.0" || all.Releases[1].Namespace != "b" || all.Releases[2].Name != "api" || all.NextPage != "" {
		t.Fatalf("/releases: %+v", all)
	}
	names := func(p Page) (out []string) {
		for _, s := range p.Releases {
			out = append(out, fmt.Sprintf("%s/%s.v%d", s.Namespace, s.Name, s.Revision))
		}
		return out
	}
	for path, want := range map[string][]string{
		"/namespaces/a/releases":                    {"a/web.v2"},
		"/namespaces/a/releases?revisions=all":      {"a/web.v1", "a/web.v2"},
		"/releases?status=failed":                   {"c/api.v1"},
		"/releases?filter=^(db|api)$":               {"b/db.v1", "c/api.v1"},
		"/releases?prefix=w":                        {"a/web.v2"},
		"/releases?label=team=data":                 {"b/db.v1"},
		"/releases?revisions=all&status=superseded": {"a/web.v1"},
		"/namespaces/z/releases":                    nil,
	} {
		var p Page
		if code := get(path, &p); code != 200 || !slices.Equal(names(p), want) {
			t.Fatalf("%s: HTTP %d %v, want %v", path, code, names(p), want)
		}
	}
	var paged []string
	for page := ""; ; {
		var p Page
		if get("/releases?revisions=all&limit=1&page="+page, &p) != 200 || len(p.Releases) != 1 {
			t.Fatalf("page %q: %+v", page, p)
		}
		paged = append(paged, names(p)...)
		if page = p.NextPage; page == "" {
			break
		}
	}
	if want := []string{"a/web.v1", "a/web.v2", "b/db.v1", "c/api.v1"}; !slices.Equal(paged, want) {
		t.Fatalf("pages of one: %v, want %v", paged, want)
	}
	var d Detail
	if get("/namespaces/a/releases/web", &d) != 200 || d.Revision != 2 || d.Status != "deployed" || d.Chart != "web-1.0.0" || d.Values["v"] != float64(2) {
		t.Fatalf("detail: %+v", d)
	}
	var hist []Summary
	if get("/namespaces/a/releases/web/history", &hist) != 200 || len(hist) != 2 || hist[0].Revision != 1 {
		t.Fatalf("history: %+v", hist)
	}
	if code := get("/namespaces/b/releases/web", nil); code != 404 {
		t.Fatalf("another namespace's release: HTTP %d, want 404", code)
	}
}
