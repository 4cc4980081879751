package helm4_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"helm.sh/helm/v4/pkg/action"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/cli"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"

	"github.com/helmstore/helmstore/helm4"
	_ "github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
)

// Open a store by name and hand Helm 4 a view of one namespace.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	store, err := helm4.Open(context.Background(), "sqlite", filepath.Join(dir, "helm.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	releases := storage.Init(store.Namespace("team-a"))
	rls := &rspb.Release{
		Name: "web", Namespace: "team-a", Version: 1, ApplyMethod: "ssa",
		Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "web", Version: "1.0.0"}},
		Info:  &rspb.Info{Status: rcommon.StatusDeployed},
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
	r := got.(*rspb.Release)
	fmt.Println(r.Name, r.Version, r.Info.Status, r.Chart.Metadata.Version, r.ApplyMethod)
	// Output: web 1 deployed 1.0.0 ssa
}

// Init is a drop-in for Helm 4's action.Configuration.Init: HELM_DRIVER
// picks the store and HELM_DRIVER_<NAME>_CONNECTION_STRING says where it
// is. Inits for other namespaces share the store's pool; each sees its own
// releases.
func ExampleInit() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	os.Setenv("HELM_DRIVER", "sqlite")
	os.Setenv("HELM_DRIVER_SQLITE_CONNECTION_STRING", filepath.Join(dir, "helm.db"))
	defer os.Unsetenv("HELM_DRIVER")
	defer os.Unsetenv("HELM_DRIVER_SQLITE_CONNECTION_STRING")

	settings := cli.New()
	teamA, teamB := action.NewConfiguration(), action.NewConfiguration()
	for ns, cfg := range map[string]*action.Configuration{"team-a": teamA, "team-b": teamB} {
		if err := helm4.Init(cfg, settings.RESTClientGetter(), ns, os.Getenv("HELM_DRIVER")); err != nil {
			fmt.Println(err)
			return
		}
	}
	rls := &rspb.Release{Name: "web", Namespace: "team-a", Version: 1, Info: &rspb.Info{Status: rcommon.StatusDeployed}}
	if err := teamA.Releases.Create(rls); err != nil {
		fmt.Println(err)
		return
	}
	got, err := teamA.Releases.Deployed("web")
	fmt.Println(teamA.Releases.Name(), got.(*rspb.Release).Name, err)
	_, err = teamB.Releases.Deployed("web")
	fmt.Println(err)
	// Output:
	// sqlite web <nil>
	// "web" has no deployed releases
}
