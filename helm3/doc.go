// Package helm3 is helmstore's user API for Helm 3: a Store is a Helm 3
// storage driver (helm.sh/helm/v3/pkg/storage/driver.Driver) over one of
// helmstore's backends, opened by name the way database/sql opens a
// database.
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
// # Driver names
//
// Each name is registered by importing its package, whose documentation
// gives the connection strings it accepts:
//
//	postgres  github.com/helmstore/helmstore/sql/postgres  PostgreSQL
//	mysql     github.com/helmstore/helmstore/sql/mysql     MySQL and MariaDB
//	sqlite    github.com/helmstore/helmstore/sql/sqlite    SQLite, no server
//	redis     github.com/helmstore/helmstore/redis         Redis (one server, Cluster, Sentinel)
//	cosmos    github.com/helmstore/helmstore/cosmos        Azure Cosmos DB for NoSQL
//	crsplit   github.com/helmstore/helmstore/crsplit       Kubernetes custom resources
//	memstore  github.com/helmstore/helmstore/memstore      in memory, for tests
//
// Package github.com/helmstore/helmstore/sql registers the three SQL names
// at once.
//
// # Opening a store
//
// Open opens a registered backend by name with a connection string. Init is
// a drop-in for action.Configuration.Init that understands every
// HELM_DRIVER name: Helm's own (secret, configmap, memory, sql, and "") pass
// straight to Helm; helmstore's are opened with their connection string
// from HELM_DRIVER_<NAME>_CONNECTION_STRING (for postgres, Helm's
// HELM_DRIVER_SQL_CONNECTION_STRING too), and the stores Init opens are
// shared per process, one pool for every namespace. Configure sets up an
// action.Configuration on a Store of the caller's, for a program that
// controls the store's lifetime itself. New puts a Store over a backend
// opened directly (a provider's Open, with a Config from NewConfig), as
// tests and programs holding a backend do:
//
//	cfg := helm3.NewConfig(redis.Name, conn, helm3.WithTimeout(30*time.Second))
//	b, err := redis.Open(ctx, cfg)
//	...
//	store := helm3.New(b, cfg)
//
// The options are WithTimeout (a bound on each operation, DefaultTimeout
// unless given), WithCacheBytes (the decoded-part cache, DefaultCacheBytes
// unless given), WithLog and WithRESTClientGetter (how crsplit reaches the
// cluster). A Store is scoped to DefaultNamespace; Namespace returns cheap
// views of the same store on other namespaces ("" lists and queries all of
// them), and Stats reports what a view's namespace holds.
//
// # Listing
//
// List is Helm's interface: whole releases, every revision. A dashboard or
// a `helm list` of a large installation calls Store.Summaries instead: a
// page of what helm list prints (SummaryQuery: latest revisions or all,
// statuses, a name filter or prefix, custom labels, Limit and PageToken),
// read from the store's index of heads with no chart, values or manifest
// read or decoded (docs/semantics.md, "Summary listings").
//
// # Errors
//
// A Store's errors for the outcomes Helm's drivers report match Helm 3's
// own sentinels (ErrReleaseNotFound, ErrReleaseExists, ErrInvalidKey,
// re-exported here) and package driver's with errors.Is, wrapped in a
// *ReleaseError that names the operation, namespace and key. The one
// exception is Query with no match, which returns ErrReleaseNotFound
// itself, as Helm's drivers do, because `helm upgrade --install` compares
// that error with ==. helmstore's own portable errors, the same for every
// backend, are ErrCorrupt (stored bytes that do not decode or match their
// digest), ErrUnavailable (the store's service cannot be reached or failed;
// never "not found"), ErrAccessDenied (the service refused the store's
// credentials or a right it needs: a setting to fix, not an outage) and
// ErrConflict (a write on a store without transactions that kept losing
// races with concurrent writers; nothing was written). Concurrent writers
// of one release follow Helm's drivers: the last writer wins. Errors and
// log lines never show a connection string's password; Redact removes it
// from a string a program logs itself.
//
// # Garbage
//
// A write that fails never leaves a half release that readers see, on any
// backend. On the backends without transactions (crsplit, cosmos), a
// writer that dies or loses the answers of its writes can leave objects no
// release uses; later writes remove most of them, and Collect removes the
// rest: run it after crashes or writes that failed with ErrUnavailable, or
// on a schedule. It never removes what a readable release or a write in
// flight uses, and does nothing on the other backends.
//
// # Why helm3
//
// The package is named for the Helm version whose types it speaks: its
// Store takes and returns Helm 3's *release.Release and its errors match
// Helm 3's sentinels. Everything below it (the engine, the codec and every
// backend) knows no Helm type, and package helm4 sits beside it for Helm 4
// tools, over the same engine, backends and stored data: a release one
// writes, the other reads. A Helm 3 tool links no Helm 4 package.
package helm3
