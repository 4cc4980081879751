package driver_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"

	"github.com/helmstore/helmstore/driver"
	_ "github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
)

// Open a store by name and hand Helm a view of one namespace.
func ExampleOpen() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	store, err := driver.Open(context.Background(), "sqlite", filepath.Join(dir, "helm.db"))
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

// Unknown driver names get an error listing the names Open can open, and
// the import that registers helmstore's names not yet registered.
func ExampleOpen_unknown() {
	_, err := driver.Open(context.Background(), "etcd", "")
	fmt.Println(err)
	// Output: helmstore: unknown storage driver "etcd": registered backends are mysql, postgres, sqlite; import _ "github.com/helmstore/helmstore/crsplit" registers crsplit
}
