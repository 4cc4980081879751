package helm3

import (
	"context"

	helmdriver "helm.sh/helm/v3/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
)

// Store is a Helm storage driver over one helmstore backend. It owns the
// backend's connection pool; views returned by Namespace share it.
type Store interface {
	helmdriver.Driver

	// Namespace returns a view of the same store scoped to ns. The empty
	// namespace means all namespaces for List and Query (as in Helm); Get,
	// Update and Delete in such a view find the key in whichever namespace
	// holds it. Views are cheap: an operator serving 500 namespaces opens
	// one Store and takes 500 views.
	Namespace(ns string) Store

	// Stats reports what the store holds in this view's namespace (all
	// namespaces for the "" view).
	Stats(ctx context.Context) (Stats, error)

	// Close releases the pool. Closing any view closes the store.
	Close() error
}

// Stats describes what a store holds (driver.Stats).
type Stats = driver.Stats
