// Package helm4 is helmstore's user API for Helm 4: a Store is a Helm 4
// storage driver (helm.sh/helm/v4/pkg/storage/driver.Driver) over one of
// helmstore's backends, opened by name the way database/sql opens a
// database. It is package helm3's twin for tools built on Helm 4: the same
// backends, options, errors and stored data, Helm 4's types.
//
// Backends register themselves when imported for their side effect:
//
//	import (
//		"github.com/helmstore/helmstore/helm4"
//		_ "github.com/helmstore/helmstore/sql" // postgres, mysql, sqlite
//	)
//
//	store, err := helm4.Open(ctx, "sqlite", "/var/lib/mytool/helm.db")
//	if err != nil {
//		return err // before deferring Close: a store that did not open is nil
//	}
//	defer store.Close()
//	cfg.Releases = storage.Init(store.Namespace("team-a"))
//
// or, in a tool that reads HELM_DRIVER as Helm does:
//
//	cfg := action.NewConfiguration()
//	err := helm4.Init(cfg, settings.RESTClientGetter(), settings.Namespace(), os.Getenv("HELM_DRIVER"))
//
// # Releases
//
// A Store keeps Helm 4's v1 releases (helm.sh/helm/v4/pkg/release/v1), every
// field included (ApplyMethod, Info.RollbackRevision, the chart's and its
// files' mod times). Create and Update take a *v1.Release or a v1.Release
// in the release.Releaser, as Helm's own drivers do; anything else (nil, a
// Helm 3 release) is refused with ErrUnsupportedRelease, never a panic. Get,
// List, Query and Delete return *v1.Release.
//
// The stored form is the one package helm3 writes: a release written by a
// Helm 3 tool reads back here and the reverse, as a release in a Secret does
// between Helm 3 and Helm 4. What only Helm 4 knows (the fields above) is
// kept by a Helm 4 write and lost when a Helm 3 tool rewrites the release
// (an upgrade marking it superseded, say), exactly as with Helm's own
// drivers, whose Helm 3 decoder drops the fields it has no place for. Each
// stored release records its release format, so a later format (Helm's
// release v2) can be stored beside v1; a release of a format this build does
// not read is ErrUnknownFormat naming it, skipped by List, and deletable.
//
// # Driver names
//
// The names are package helm3's, registered by importing the same packages:
// postgres, mysql, sqlite (package sql registers the three), redis, cosmos,
// crsplit and memstore. Init is a drop-in for action.Configuration.Init
// that understands every HELM_DRIVER name: Helm's own (secret, configmap,
// memory, sql, and "") go straight to Helm 4; helmstore's are opened with
// their connection string from HELM_DRIVER_<NAME>_CONNECTION_STRING, and
// the stores Init opens are shared per process, one pool for every
// namespace. Configure sets up an action.Configuration on a Store of the
// caller's; New puts a Store over a backend opened directly (a provider's
// Open, with a Config from NewConfig).
//
// # Options and logging
//
// WithTimeout, WithCacheBytes and WithRESTClientGetter are package helm3's.
// Logging is log/slog, as in Helm 4: WithLogger sets the handler (the
// default is slog.Default's), Store.SetLogger replaces it for every view and
// for the backend, and storage.Init finds it through Store.Logger. helmstore
// logs at debug level only, and never a connection string's password.
//
// # Listing
//
// Store.Summaries is package helm3's: a page of what helm list prints, from
// the store's index of heads alone, for dashboards and large installations.
//
// # Errors
//
// A Store's errors for the outcomes Helm's drivers report match Helm 4's
// own sentinels (ErrReleaseNotFound, ErrReleaseExists, ErrInvalidKey,
// re-exported here) and package driver's with errors.Is, wrapped in a
// *ReleaseError naming the operation, namespace and key; Query with no match
// returns ErrReleaseNotFound itself, as Helm's drivers do. ErrCorrupt,
// ErrUnavailable, ErrAccessDenied and ErrConflict are package driver's, the
// same under both faces and every backend (package helm3 documents them).
//
// # Why a package per Helm
//
// A face speaks one Helm version's Go types, so a tool links only the Helm
// it is built on: importing helm4 links no Helm 3 package, and importing
// helm3 no Helm 4 one. Below the faces, the engine, the codec and every
// backend know no Helm type; each face meets the engine through one codec
// (internal/helm4codec here), with no conversion between Helm versions on
// the way, so a Helm 4 tool pays what a Helm 3 one does.
package helm4
