package mysql_test

import (
	"context"
	"fmt"
	"log"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/sql/mysql" // registers mysql
)

// MySQL or MariaDB: a go-sql-driver DSN or a mysql:// URL naming a
// database, with helmstore's tls-ca, tls-cert and tls-key parameters for
// TLS against a private CA. helm3.Init reads it from
// HELM_DRIVER_MYSQL_CONNECTION_STRING.
func Example() {
	ctx := context.Background()
	store, err := helm3.Open(ctx, "mysql",
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
