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

	// Summaries returns a page of the summary listing q selects in this
	// view's namespace (all namespaces for the "" view): what helm list
	// prints and a dashboard shows of each release (or each revision),
	// read from the store's index of heads alone, with no chart, values
	// or manifest read or decoded: the listing to call where List would
	// build every release only to show its name and status. Entries come
	// by namespace, name and revision; SummaryQuery.Limit and PageToken
	// page through them. A revision whose stored head cannot be read is
	// skipped, as List skips it.
	Summaries(ctx context.Context, q SummaryQuery) (SummaryPage, error)

	// Close releases the pool. Closing any view closes the store.
	Close() error
}

// Stats describes what a store holds (driver.Stats).
type Stats = driver.Stats

// SummaryQuery selects a summary listing (driver.SummaryQuery).
type SummaryQuery = driver.SummaryQuery

// SummaryPage is one page of a summary listing (driver.SummaryPage).
type SummaryPage = driver.SummaryPage

// Summary is one revision of a summary listing (driver.Summary).
type Summary = driver.Summary
