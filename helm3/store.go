package helm3

import (
	"context"

	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
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

// Stats describes what a store holds.
type Stats struct {
	// Releases is the number of stored revisions (heads).
	Releases int
	// HeadBytes is the size of the stored heads: release info, hooks, labels.
	HeadBytes int64
	// Parts counts distinct stored parts by kind: "chart", "values", "manifest".
	Parts map[string]int
	// PartBytes is the stored (compressed) size of all parts.
	PartBytes int64
	// RawPartBytes is the uncompressed size of all parts.
	RawPartBytes int64
}

// StoredBytes is everything the store holds for these releases, as stored.
func (s Stats) StoredBytes() int64 { return s.HeadBytes + s.PartBytes }

// TotalParts is the number of distinct stored parts of every kind.
func (s Stats) TotalParts() int {
	n := 0
	for _, c := range s.Parts {
		n += c
	}
	return n
}
