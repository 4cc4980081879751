// Command releaseapi serves Helm releases over HTTP as JSON, the way a
// dashboard backend would: list, get and history, from any helmstore store.
//
//	go run ./examples/releaseapi                    # sqlite at DefaultSQLitePath
//	HELM_DRIVER=postgres HELM_DRIVER_POSTGRES_CONNECTION_STRING=postgres://... go run ./examples/releaseapi
//	HELM_DRIVER=crsplit go run ./examples/releaseapi -listen :8080   # the cluster of KUBECONFIG's current context
//
// Flags: -listen address (default 127.0.0.1:8080). It reads:
//
//   - HELM_DRIVER: which helmstore backend, sqlite when unset; sqlite,
//     postgres, mysql or crsplit (the example imports every backend).
//     Helm's own names (secret, configmap, memory, sql) are not stores
//     helm3.Open can open.
//   - HELM_DRIVER_<NAME>_CONNECTION_STRING: the backend's connection string,
//     e.g. HELM_DRIVER_SQLITE_CONNECTION_STRING (a file; unset for
//     DefaultSQLitePath, helmstore.db in Helm's data directory,
//     HELM_DATA_HOME), HELM_DRIVER_POSTGRES_CONNECTION_STRING (falling back
//     to Helm's HELM_DRIVER_SQL_CONNECTION_STRING),
//     HELM_DRIVER_MYSQL_CONNECTION_STRING, or for crsplit an optional
//     kubeconfig context.
//   - for crsplit, the kubeconfig: KUBECONFIG, else ~/.kube/config, else the
//     in-cluster configuration.
//
// Routes:
//
//	GET /releases                          every release, every namespace (latest revision each)
//	GET /namespaces/{ns}/releases          the releases of one namespace
//	GET /namespaces/{ns}/releases/{name}   the latest revision, with values and manifest
//	GET /namespaces/{ns}/releases/{name}/history
package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/releaseutil"
	"helm.sh/helm/v3/pkg/storage"

	"github.com/helmstore/helmstore/helm3"
)

// API serves releases from a store.
type API struct{ Store helm3.Store }

// Summary is one revision as a list shows it.
type Summary struct {
	Namespace  string    `json:"namespace"`
	Name       string    `json:"name"`
	Revision   int       `json:"revision"`
	Status     string    `json:"status"`
	Chart      string    `json:"chart"`
	AppVersion string    `json:"appVersion"`
	Updated    time.Time `json:"updated"`
}

// Detail is one revision with what a release page shows.
type Detail struct {
	Summary
	Description string                 `json:"description"`
	Values      map[string]interface{} `json:"values"`
	Manifest    string                 `json:"manifest"`
	Notes       string                 `json:"notes"`
}

func summarize(r *release.Release) Summary {
	s := Summary{Namespace: r.Namespace, Name: r.Name, Revision: r.Version}
	if r.Info != nil {
		s.Status, s.Updated = r.Info.Status.String(), r.Info.LastDeployed.Time
	}
	if r.Chart != nil && r.Chart.Metadata != nil {
		s.Chart, s.AppVersion = r.Chart.Metadata.Name+"-"+r.Chart.Metadata.Version, r.Chart.Metadata.AppVersion
	}
	return s
}

// Handler returns the HTTP routes.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /releases", func(w http.ResponseWriter, r *http.Request) { a.list(w, "") })
	mux.HandleFunc("GET /namespaces/{ns}/releases", func(w http.ResponseWriter, r *http.Request) { a.list(w, r.PathValue("ns")) })
	mux.HandleFunc("GET /namespaces/{ns}/releases/{name}", func(w http.ResponseWriter, r *http.Request) {
		rls, err := storage.Init(a.Store.Namespace(r.PathValue("ns"))).Last(r.PathValue("name"))
		if err != nil {
			fail(w, err)
			return
		}
		d := Detail{Summary: summarize(rls), Values: rls.Config, Manifest: rls.Manifest}
		if rls.Info != nil {
			d.Description, d.Notes = rls.Info.Description, rls.Info.Notes
		}
		reply(w, d)
	})
	mux.HandleFunc("GET /namespaces/{ns}/releases/{name}/history", func(w http.ResponseWriter, r *http.Request) {
		hist, err := storage.Init(a.Store.Namespace(r.PathValue("ns"))).History(r.PathValue("name"))
		if err != nil {
			fail(w, err)
			return
		}
		releaseutil.SortByRevision(hist)
		out := make([]Summary, len(hist))
		for i, h := range hist {
			out[i] = summarize(h)
		}
		reply(w, out)
	})
	return mux
}

// list answers with the latest revision of each release in ns ("" = all).
func (a *API) list(w http.ResponseWriter, ns string) {
	rs, err := a.Store.Namespace(ns).List(func(*release.Release) bool { return true })
	if err != nil {
		fail(w, err)
		return
	}
	latest := map[string]*release.Release{}
	for _, r := range rs {
		k := r.Namespace + "/" + r.Name
		if cur, ok := latest[k]; !ok || r.Version > cur.Version {
			latest[k] = r
		}
	}
	out := []Summary{}
	for _, r := range latest {
		out = append(out, summarize(r))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	reply(w, out)
}

func reply(w http.ResponseWriter, v interface{}) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, helm3.ErrReleaseNotFound) {
		code = http.StatusNotFound
	}
	http.Error(w, err.Error(), code)
}
