package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
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
	}{{"a", "web", 1, release.StatusSuperseded}, {"a", "web", 2, release.StatusDeployed}, {"b", "db", 1, release.StatusDeployed}} {
		rls := &release.Release{Name: r.name, Namespace: r.ns, Version: r.v, Config: map[string]interface{}{"v": r.v},
			Chart: &chart.Chart{Metadata: &chart.Metadata{Name: r.name, Version: "1.0.0", AppVersion: "2.0"}},
			Info:  &release.Info{Status: r.status}, Manifest: "kind: ConfigMap\n"}
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
	var all []Summary
	if get("/releases", &all) != 200 || len(all) != 2 || all[0].Name != "web" || all[0].Revision != 2 || all[1].Namespace != "b" {
		t.Fatalf("/releases: %+v", all)
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
