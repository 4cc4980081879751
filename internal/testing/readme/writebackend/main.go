// The outline of a backend: a driver.Backend over your store, registered by name.
package main

import (
	"context"
	"fmt"
	"log"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
)

// Name is the HELM_DRIVER name the backend registers.
const Name = "mystore"

func init() { driver.Register(Name, Open) }

// Open connects to the store cfg.ConnectionString names, and checks the
// connection, so that a bad address fails Open rather than the first Helm
// command.
func Open(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
	return &backend{}, nil
}

// backend stores heads and content-addressed parts. driver.Backend's
// documentation is the contract of its methods (Heads, Parts, Create,
// Update, Delete, Stats, Close); memstore is a whole backend to copy.
type backend struct {
	driver.Backend // the methods not written yet
}

// Close releases the connection.
func (b *backend) Close() error { return nil }

func main() {
	// helm3.Open wraps the backend in the engine, which keeps Helm's rules.
	store, err := helm3.Open(context.Background(), Name, "")
	if err != nil {
		log.Fatal(err)
	}
	defer store.Close()
	fmt.Println("opened", Name) // in a test: drivertest.Run checks it
}
