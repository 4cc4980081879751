package postgres_test

import (
	"context"
	"fmt"
	"log"

	"helm.sh/helm/v3/pkg/storage"

	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/sql/postgres" // registers postgres
)

// PostgreSQL: a postgres:// URL or keyword/value pairs, as pgx and libpq
// accept them. Where a program reads HELM_DRIVER, helm3.Init opens the same
// store from HELM_DRIVER_POSTGRES_CONNECTION_STRING (or Helm's
// HELM_DRIVER_SQL_CONNECTION_STRING).
func Example() {
	ctx := context.Background()
	store, err := helm3.Open(ctx, "postgres",
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
