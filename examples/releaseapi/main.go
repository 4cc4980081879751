package main

import (
	"context"
	"flag"
	"log"
	"net/http"
	"os"

	_ "github.com/helmstore/helmstore/crsplit" // registers crsplit
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/registry"
	_ "github.com/helmstore/helmstore/sql" // registers postgres, mysql, sqlite
)

func main() {
	addr := flag.String("listen", "127.0.0.1:8080", "address to serve on")
	flag.Parse()
	name := os.Getenv("HELM_DRIVER")
	if name == "" {
		name = "sqlite"
	}
	store, err := helm3.Open(context.Background(), name, registry.ConnectionStringFromEnv(name), helm3.WithLog(log.Printf))
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	log.Printf("serving %s releases on http://%s/releases", name, *addr)
	log.Fatal(http.ListenAndServe(*addr, (&API{Store: store}).Handler()))
}
