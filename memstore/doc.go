// Package memstore is a helmstore backend that keeps releases in memory,
// registered as "memstore" (Helm's own "memory" driver keeps its name).
//
// It is complete (every rule of Helm's drivers, labels, queries, deltas and
// part sharing, checked by the whole drivertest suite) and fast, for tests
// and for tools that need a throwaway store. Data lives in a named space:
// stores opened with the same connection string in one process share it,
// as a second process would share a database ("" opens a private space).
// A space lives as long as a store is open on it.
//
// It is also the template for a new backend: a backend is a translation of
// the eight methods of driver.Backend to a store, written with the public
// names of package driver only. Copy this package, replace the maps with the
// store's own records, keep the structure:
//
//   - open.go: const Name, and Open, the driver.Opener registered under Name
//     in init: it opens the store from cfg.ConnectionString and returns the
//     Backend (helm3.Open puts the engine over it; helm3.New does for a
//     backend opened directly).
//   - heads.go: Heads (select with Query.Matches, order with SortHeads).
//   - writes.go: Create, Update and Delete, each atomic (here one mutex; a
//     transaction, a script or a batch in a real store), parts stored once
//     per namespace with a reference count (DiffParts, PlanDelete).
//   - parts.go: Parts and Stats.
//
// and run drivertest on it (conformance_test.go).
package memstore
