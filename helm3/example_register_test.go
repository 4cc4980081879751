package helm3_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/helmstore/helmstore/driver"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/sql/sqlite"
)

// A package registers its store under a name from init, as database/sql
// drivers do; importing the package for its side effect then makes the
// name available to Open and to Init (HELM_DRIVER=appdata).
func init() {
	driver.Register("appdata", openAppData)
}

// openAppData opens the "appdata" backend: a SQLite database in the
// directory the connection string names. The Config holds everything Open
// was given.
func openAppData(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
	if cfg.ConnectionString == "" {
		return nil, fmt.Errorf("appdata: the connection string must name a directory")
	}
	c := *cfg
	c.ConnectionString = filepath.Join(cfg.ConnectionString, "releases.db")
	return sqlite.Open(ctx, &c)
}

func Example_register() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)

	store, err := helm3.Open(context.Background(), "appdata", dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	r := &release.Release{Name: "web", Namespace: "default", Version: 1, Info: &release.Info{Status: release.StatusDeployed}}
	if err := store.Create("sh.helm.release.v1.web.v1", r); err != nil {
		fmt.Println(err)
		return
	}
	_, statErr := os.Stat(filepath.Join(dir, "releases.db"))
	fmt.Println("database in the directory:", statErr == nil)

	_, err = helm3.Open(context.Background(), "appdata", "")
	fmt.Println(err)
	// Output:
	// database in the directory: true
	// helmstore: open appdata: appdata: the connection string must name a directory
}
