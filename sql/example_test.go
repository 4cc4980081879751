package sql_test

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

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
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
func Example_sqlite() {
	dir, err := os.MkdirTemp("", "helmstore-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	store, err := driver.Open(ctx, "sqlite", filepath.Join(dir, "helm.db"))
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
func Example_sqliteURI() {
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
		store, err := driver.Open(ctx, "sqlite", conn)
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

// PostgreSQL: a postgres:// URL or keyword/value pairs, as pgx and libpq
// accept them. Where a program reads HELM_DRIVER, driver.Init opens the same
// store from HELM_DRIVER_POSTGRES_CONNECTION_STRING (or Helm's
// HELM_DRIVER_SQL_CONNECTION_STRING).
func Example_postgres() {
	ctx := context.Background()
	store, err := driver.Open(ctx, "postgres",
		"postgres://helm:secret@db.example.com:5432/helm?sslmode=verify-full&search_path=helm")
	// or "host=db.example.com user=helm password=secret dbname=helm sslmode=verify-full"
	if err != nil {
		log.Fatal(err) // the password is redacted from the error
	}
	defer store.Close()

	releases := storage.Init(store.Namespace("team-a"))
	deployed, err := releases.Deployed("web")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(deployed.Name, deployed.Version)
}

// MySQL or MariaDB: a go-sql-driver DSN or a mysql:// URL naming a
// database, with helmstore's tls-ca, tls-cert and tls-key parameters for
// TLS against a private CA. driver.Init reads it from
// HELM_DRIVER_MYSQL_CONNECTION_STRING.
func Example_mysql() {
	ctx := context.Background()
	store, err := driver.Open(ctx, "mysql",
		"helm:secret@tcp(db.example.com:3306)/helm?tls-ca=/etc/ssl/db-ca.pem")
	// or "mysql://helm:secret@db.example.com:3306/helm?tls=true"
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()

	rs, err := store.Namespace("").List(func(r *release.Release) bool {
		return r.Info.Status == release.StatusFailed
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range rs {
		fmt.Println(r.Namespace, r.Name, r.Version)
	}
}

// DefaultSQLitePath is where HELM_DRIVER=sqlite keeps releases when
// HELM_DRIVER_SQLITE_CONNECTION_STRING is empty: in Helm's data directory,
// next to its repositories and plugins.
func ExampleDefaultSQLitePath() {
	path := sql.DefaultSQLitePath() // e.g. /home/alice/.local/share/helm/helmstore.db
	if path == "" {
		log.Fatal("no home directory: set HELM_DATA_HOME or give the database's path")
	}
	store, err := driver.Open(context.Background(), "sqlite", "") // opens path
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	fmt.Println("releases are kept in", path)
}
