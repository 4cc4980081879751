package helm3_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"

	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
)

// Open a store by name and hand Helm a view of one namespace.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	store, err := helm3.Open(context.Background(), "sqlite", filepath.Join(dir, "helm.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	releases := storage.Init(store.Namespace("team-a"))
	rls := &release.Release{
		Name: "web", Namespace: "team-a", Version: 1,
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "web", Version: "1.0.0"}},
		Info:  &release.Info{Status: release.StatusDeployed},
	}
	if err := releases.Create(rls); err != nil {
		fmt.Println(err)
		return
	}
	got, err := releases.Deployed("web")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(got.Name, got.Version, got.Info.Status, got.Chart.Metadata.Version)
	// Output: web 1 deployed 1.0.0
}

// Unknown driver names get an error listing the names Open can open (here
// those of every backend this package's tests import, and ExampleRegister's
// "appdata"), and helmstore's backends not imported (for a name of one of
// them, the import that registers it).
func ExampleOpen_unknown() {
	_, err := helm3.Open(context.Background(), "postgress", "")
	fmt.Println(errors.Is(err, helm3.ErrUnknownDriver))
	// The message goes on to list the registered backends, and the known
	// ones that are not imported.
	what, _, _ := strings.Cut(err.Error(), ": registered")
	fmt.Println(what)
	// Output:
	// true
	// helmstore: unknown storage driver "postgress" (did you mean "postgres"?)
}

// Init is a drop-in for action.Configuration.Init: HELM_DRIVER picks the
// store and HELM_DRIVER_<NAME>_CONNECTION_STRING says where it is. Inits
// for other namespaces share the store's pool; each sees its own releases.
func ExampleInit() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.Setenv("HELM_DRIVER", "sqlite")
	os.Setenv("HELM_DRIVER_SQLITE_CONNECTION_STRING", filepath.Join(dir, "helm.db"))
	defer os.Unsetenv("HELM_DRIVER")
	defer os.Unsetenv("HELM_DRIVER_SQLITE_CONNECTION_STRING")

	settings := cli.New()
	teamA, teamB := new(action.Configuration), new(action.Configuration)
	for ns, cfg := range map[string]*action.Configuration{"team-a": teamA, "team-b": teamB} {
		if err := helm3.Init(cfg, settings.RESTClientGetter(), ns, os.Getenv("HELM_DRIVER"), nil); err != nil {
			fmt.Println(err)
			return
		}
	}
	rls := &release.Release{Name: "web", Namespace: "team-a", Version: 1, Info: &release.Info{Status: release.StatusDeployed}}
	if err := teamA.Releases.Create(rls); err != nil {
		fmt.Println(err)
		return
	}
	got, err := teamA.Releases.Deployed("web")
	fmt.Println(teamA.Releases.Name(), got.Name, got.Version, err)
	_, err = teamB.Releases.Deployed("web")
	fmt.Println(err)
	// Output:
	// sqlite web 1 <nil>
	// "web" has no deployed releases
}

// List what helm list shows, a page at a time, without reading a chart,
// values or manifest: a dashboard's listing of every namespace.
func ExampleStore_summaries() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	store, err := helm3.Open(context.Background(), "sqlite", filepath.Join(dir, "helm.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	for _, r := range []struct {
		ns, name string
		version  int
		status   release.Status
	}{
		{"team-a", "web", 1, release.StatusSuperseded},
		{"team-a", "web", 2, release.StatusDeployed},
		{"team-b", "db", 1, release.StatusDeployed},
		{"team-c", "cache", 1, release.StatusDeployed},
	} {
		rls := &release.Release{Name: r.name, Namespace: r.ns, Version: r.version,
			Chart: &chart.Chart{Metadata: &chart.Metadata{Name: r.name, Version: "1.0.0", AppVersion: "2.1"}},
			Info:  &release.Info{Status: r.status, Description: "Install complete"}}
		if err := storage.Init(store.Namespace(r.ns)).Create(rls); err != nil {
			fmt.Println(err)
			return
		}
	}
	q := helm3.SummaryQuery{Statuses: []string{"deployed", "failed"}, Limit: 2}
	for {
		page, err := store.Namespace("").Summaries(context.Background(), q)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, s := range page.Summaries {
			fmt.Println(s.Namespace, s.Name, s.Revision, s.Status, s.Chart+"-"+s.ChartVersion, s.AppVersion)
		}
		if page.NextPageToken == "" {
			break
		}
		q.PageToken = page.NextPageToken
		fmt.Println("--")
	}
	// Output:
	// team-a web 2 deployed web-1.0.0 2.1
	// team-b db 1 deployed db-1.0.0 2.1
	// --
	// team-c cache 1 deployed cache-1.0.0 2.1
}
