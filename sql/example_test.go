package sql_test

import (
	"context"
	"fmt"
	"log"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
)

// DefaultSQLitePath is where HELM_DRIVER=sqlite keeps releases when
// HELM_DRIVER_SQLITE_CONNECTION_STRING is empty: in Helm's data directory,
// next to its repositories and plugins.
func ExampleDefaultSQLitePath() {
	path := sql.DefaultSQLitePath() // e.g. /home/alice/.local/share/helm/helmstore.db
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
