// Package driver is helmstore's public face: a Store is a Helm storage driver
// (helm.sh/helm/v3/pkg/storage/helm3.Driver) backed by one of helmstore's
// backends, opened by name the way database/sql opens a database.
//
// Backends register themselves when imported for their side effect:
//
//	import (
//		"github.com/helmstore/helmstore/helm3"
//		_ "github.com/helmstore/helmstore/sql" // postgres, mysql, sqlite
//	)
//
//	store, err := helm3.Open(ctx, "sqlite", "/var/lib/mytool/helm.db")
//	if err != nil {
//		return err // before deferring Close: a store that did not open is nil
//	}
//	defer store.Close()
//	cfg.Releases = storage.Init(store.Namespace("team-a"))
//
// Each backend package documents its connection strings: package sql for
// postgres, mysql and sqlite, package crsplit for crsplit.
//
// Init is a drop-in for action.Configuration.Init that understands every
// HELM_DRIVER name: Helm's own (secret, configmap, memory, sql) pass straight
// to Helm, helmstore's are opened from the environment.
//
// Errors are Helm's own sentinel values (ErrReleaseNotFound and friends,
// re-exported here) wrapped in a *ReleaseError that names the operation,
// namespace and key, so errors.Is works. The one exception is Query with no
// match, which returns ErrReleaseNotFound itself, as Helm's drivers do,
// because `helm upgrade --install` compares that error with ==. helmstore's
// own portable errors, the same for every backend, are ErrCorrupt (stored
// bytes that do not decode or match their digest), ErrUnavailable (the
// store's service cannot be reached or failed; never "not found"),
// ErrAccessDenied (the service refused the store's credentials or a right
// it needs: a setting to fix, not an outage) and ErrConflict (a write on a
// store without transactions that kept losing races with concurrent
// writers; nothing was written). Concurrent writers
// of one release follow Helm's drivers: the last writer wins.
//
// A write that fails never leaves a half release that readers see, on any
// backend. On the backends without transactions (crsplit, cosmos), a
// writer that dies or loses the answers of its writes can leave objects no
// release uses; later writes remove most of them, and Collect removes the
// rest: run it after crashes or writes that failed with ErrUnavailable, or
// on a schedule. It never removes what a readable release or a write in
// flight uses, and does nothing on the other backends.
package helm3
