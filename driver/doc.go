// Package driver is the interface a helmstore backend implements, and
// everything a backend needs to implement it, in the manner of
// database/sql/driver and gocloud.dev/docstore/driver. It is a leaf: it
// imports the standard library only, neither Helm nor Kubernetes, so a
// backend and its tests link no more than the store they talk to.
//
// Users do not call a Backend. They open a store through a face, the user
// API for one Helm version (package helm3, for Helm 3), whose engine holds
// every rule of Helm's drivers (keys, namespaces, labels, timestamps, which
// error each method returns, deltas, the part cache, size limits, verifying
// what is read) and asks the backend only to store heads and parts.
//
// # Writing a backend
//
// A backend implements Backend; its documentation is the contract (what a
// backend must do, and what it need not). It works in this package's types
// only: Head (one stored revision without its parts), Query (which heads to
// return), ListQuery (which heads a summary listing shows: List serves it
// from the heads' index fields and summary, ListQuery.Select applies what a
// store's indexes cannot), Part and PartRef (a content-addressed chart, values or manifest,
// and a reference to one), Digest and Kind. A backend whose writes can
// leave garbage that later writes do not remove also implements Collector.
//
// A provider package has a constant Name, its HELM_DRIVER name, and a
// function Open of type Opener, which it registers in its init:
//
//	const Name = "mystore"
//
//	func init() { driver.Register(Name, Open) }
//
//	func Open(ctx context.Context, cfg *driver.Config) (driver.Backend, error)
//
// Config is everything an Opener gets: the driver name, the connection
// string (which may hold a password: log it only through Redact), the part
// cache bound and per-operation Timeout the engine applies, a Log, and for
// Kubernetes backends the RESTClientGetter (held as any, so that this
// package links no Kubernetes code). Open (the function of this package)
// opens the backend registered under cfg.Name, as a face's Open does; its
// error is an *OpenError naming the driver with the connection string
// redacted. Drivers lists the registered names, CheckDriver and
// IsHelmDriver tell a face's Init which names it can open and which are
// Helm's own, and ConnectionStringEnv and ConnectionStringFromEnv name and
// read a backend's connection-string variable
// (HELM_DRIVER_<NAME>_CONNECTION_STRING).
//
// # Errors
//
// ErrReleaseNotFound, ErrReleaseExists and ErrInvalidKey are this package's
// own values, with the texts of Helm's: a backend returns them (wrapped or
// not), and each face maps them to its Helm version's sentinels, so that a
// helm3 Store's errors match both Helm's values and these with errors.Is.
// A test that calls a Backend directly checks for these, not Helm's.
// ErrCorrupt (stored bytes that do not decode or match their digest),
// ErrUnavailable (the service cannot be reached or failed; never "not
// found"), ErrAccessDenied (the service refused the credentials or a right:
// a setting to fix) and ErrConflict (a write on a store without
// transactions that kept losing races; nothing was written) are helmstore's
// portable errors, the same under every face and backend. ReleaseError is
// the error of an operation on one release; ErrUnknownDriver is wrapped for
// a name nobody registered.
//
// # The head seal
//
// Head.Body is the release without its parts, sealed by the engine over the
// head's key and part digests (Head.Seal): a backend stores it as it is and
// never decodes it. A head whose body, key or digests were changed apart
// from the others (a hand edit, a row copied from another release) fails
// Head.Verify, and then its digests may name another release's parts: a
// backend deleting or replacing such a head must not drop references to
// them. DiffParts and PlanDelete apply that rule for the backend; one that
// records a head's references apart from its body, and so reads back an
// old head with digests but no body, vouches for them by sealing that head
// (Head.Seal) before DiffParts.
//
// # Helpers
//
// What every backend needs is here, written once: Query.Matches and
// SortHeads for Heads; DiffParts and Head.KeepCreatedAt for Update;
// PlanDelete for Delete; Head.AllLabels for stores that index labels;
// Head.DigestText and Head.SetDigestText for storing digests as text;
// Chunks and JoinChunks for stores with a value size limit below
// MaxPartBytes and MaxHeadBytes; MakeKey and ParseKey for Helm's keys;
// Redact for connection strings in messages.
//
// Package memstore is a complete backend, in memory, written with this
// package's public names only: copy it. Package drivertest is the
// conformance suite: run drivertest.Run on the new backend.
package driver
