package sqlite_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/sql/sqlite" // registers sqlite
)

// revision is revision v of release web in namespace team-a, as helm upgrade
// writes it: the same chart every time, new values.
func revision(v int, status release.Status) *release.Release {
	return &release.Release{
		Name: "web", Namespace: "team-a", Version: v,
		Chart: &chart.Chart{
			Metadata:  &chart.Metadata{Name: "web", Version: "1.4.0", APIVersion: chart.APIVersionV2},
			Templates: []*chart.File{{Name: "templates/deployment.yaml", Data: []byte("kind: Deployment\n")}},
		},
		Config: map[string]interface{}{"replicas": v},
		Info:   &release.Info{Status: status},
	}
}

// The embedded default: a SQLite file, no server. Three upgrades of a
// release store its chart once.
func Example() {
	dir, err := os.MkdirTemp("", "helmstore-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	store, err := helm3.Open(ctx, "sqlite", filepath.Join(dir, "helm.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	team := store.Namespace("team-a")
	releases := storage.Init(team) // what action.Configuration.Releases holds
	for v := 1; v <= 3; v++ {
		if v > 1 {
			if err := releases.Update(revision(v-1, release.StatusSuperseded)); err != nil {
				log.Fatal(err)
			}
		}
		if err := releases.Create(revision(v, release.StatusDeployed)); err != nil {
			log.Fatal(err)
		}
	}

	history, err := releases.History("web")
	if err != nil {
		log.Fatal(err)
	}
	sort.Slice(history, func(i, j int) bool { return history[i].Version < history[j].Version })
	for _, r := range history {
		fmt.Println(r.Name, r.Version, r.Info.Status, r.Config["replicas"])
	}
	stats, err := team.Stats(ctx)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(stats.Releases, "revisions,", stats.Parts["chart"], "chart stored")
	// Output:
	// web 1 superseded 1
	// web 2 superseded 2
	// web 3 deployed 3
	// 3 revisions, 1 chart stored
}

// A file: URI passes modernc.org/sqlite's parameters, such as pragmas, on to
// SQLite; ":memory:" is a database that lives as long as the store.
func Example_uri() {
	dir, err := os.MkdirTemp("", "helmstore-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	for _, conn := range []string{
		"file:" + filepath.Join(dir, "helm.db") + "?_pragma=synchronous(NORMAL)",
		":memory:",
	} {
		store, err := helm3.Open(ctx, "sqlite", conn)
		if err != nil {
			log.Fatal(err)
		}
		if err := store.Namespace("team-a").Create("sh.helm.release.v1.web.v1", revision(1, release.StatusDeployed)); err != nil {
			log.Fatal(err)
		}
		rs, err := store.Namespace("").List(func(*release.Release) bool { return true })
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(len(rs), "release")
		store.Close()
	}
	// Output:
	// 1 release
	// 1 release
}

// DefaultPath is where HELM_DRIVER=sqlite keeps releases when
// HELM_DRIVER_SQLITE_CONNECTION_STRING is empty: in Helm's data directory,
// next to its repositories and plugins.
func ExampleDefaultPath() {
	path := sqlite.DefaultPath() // e.g. /home/alice/.local/share/helm/helmstore.db
	if path == "" {
		log.Fatal("no home directory: set HELM_DATA_HOME or give the database's path")
	}
	store, err := helm3.Open(context.Background(), "sqlite", "") // opens path
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	fmt.Println("releases are kept in", path)
}
