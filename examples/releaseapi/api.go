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
//	    ?status=deployed&status=failed&filter=^web&prefix=web&label=team=a&revisions=all&limit=50&page=...
//	                                       (a page of Store.Summaries: no chart, values or manifest is read)
//	GET /namespaces/{ns}/releases/{name}   the latest revision, with values and manifest
//	GET /namespaces/{ns}/releases/{name}/history
package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
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
	Namespace   string            `json:"namespace"`
	Name        string            `json:"name"`
	Revision    int               `json:"revision"`
	Status      string            `json:"status"`
	Chart       string            `json:"chart"`
	AppVersion  string            `json:"appVersion"`
	Updated     time.Time         `json:"updated"`
	Description string            `json:"description"`
	Labels      map[string]string `json:"labels,omitempty"`
}

// Page is one page of a listing.
type Page struct {
	Releases []Summary `json:"releases"`
	// NextPage, if set, is the page parameter of the next page.
	NextPage string `json:"nextPage,omitempty"`
}

// Detail is one revision with what a release page shows.
type Detail struct {
	Summary
	Values   map[string]interface{} `json:"values"`
	Manifest string                 `json:"manifest"`
	Notes    string                 `json:"notes"`
}

func summarize(r *release.Release) Summary {
	s := Summary{Namespace: r.Namespace, Name: r.Name, Revision: r.Version}
	if r.Info != nil {
		s.Status, s.Updated, s.Description = r.Info.Status.String(), r.Info.LastDeployed.Time, r.Info.Description
	}
	if r.Chart != nil && r.Chart.Metadata != nil {
		s.Chart, s.AppVersion = r.Chart.Metadata.Name+"-"+r.Chart.Metadata.Version, r.Chart.Metadata.AppVersion
	}
	return s
}

// Handler returns the HTTP routes.
func (a *API) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /releases", func(w http.ResponseWriter, r *http.Request) { a.list(w, r, "") })
	mux.HandleFunc("GET /namespaces/{ns}/releases", func(w http.ResponseWriter, r *http.Request) { a.list(w, r, r.PathValue("ns")) })
	mux.HandleFunc("GET /namespaces/{ns}/releases/{name}", func(w http.ResponseWriter, r *http.Request) {
		rls, err := storage.Init(a.Store.Namespace(r.PathValue("ns"))).Last(r.PathValue("name"))
		if err != nil {
			fail(w, err)
			return
		}
		d := Detail{Summary: summarize(rls), Values: rls.Config, Manifest: rls.Manifest}
		if rls.Info != nil {
			d.Notes = rls.Info.Notes
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

// list answers with a page of the summary listing of ns ("" = all):
// Store.Summaries, which reads no chart, values or manifest, however large
// the releases. Query parameters: status (repeatable: deployed, failed,
// ...), filter (a regular expression on the name, as helm list --filter),
// prefix (of the name), label (repeatable key=value), revisions=all (every
// revision, not only the latest), limit and page (the nextPage of the
// previous answer).
func (a *API) list(w http.ResponseWriter, r *http.Request, ns string) {
	v := r.URL.Query()
	q := helm3.SummaryQuery{Statuses: v["status"], Filter: v.Get("filter"), NamePrefix: v.Get("prefix"),
		AllRevisions: v.Get("revisions") == "all", PageToken: v.Get("page")}
	for _, l := range v["label"] {
		k, val, ok := strings.Cut(l, "=")
		if !ok {
			http.Error(w, "label must be key=value", http.StatusBadRequest)
			return
		}
		if q.Labels == nil {
			q.Labels = map[string]string{}
		}
		q.Labels[k] = val
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			http.Error(w, "limit must be a number", http.StatusBadRequest)
			return
		}
		q.Limit = n
	}
	page, err := a.Store.Namespace(ns).Summaries(r.Context(), q)
	if err != nil {
		fail(w, err)
		return
	}
	out := Page{Releases: []Summary{}, NextPage: page.NextPageToken}
	for _, s := range page.Summaries {
		out.Releases = append(out.Releases, Summary{Namespace: s.Namespace, Name: s.Name, Revision: s.Revision,
			Status: s.Status, Chart: s.Chart + "-" + s.ChartVersion, AppVersion: s.AppVersion, Updated: s.Updated,
			Description: s.Description, Labels: s.Labels})
	}
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
