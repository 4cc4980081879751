// Package driver is the interface a helmstore backend implements.
// Applications use package helm3 or helm4 instead.
//
// It is a leaf, in the manner of database/sql/driver and
// gocloud.dev/docstore/driver: it imports the standard library only,
// neither Helm nor Kubernetes, so a backend and its tests link no more than
// the store they talk to. A face (helm3, helm4) puts the engine over a
// Backend; the engine holds every rule of Helm's drivers (keys, namespaces,
// labels, timestamps, errors, deltas, the part cache, size limits,
// verifying what is read) and asks the backend only to store heads and
// parts.
//
// # Writing a backend
//
// A backend implements Backend; its documentation is the contract. It works
// in this package's types: Head (one stored revision without its parts,
// with its SummaryFields), Query (which heads Heads returns), ListQuery
// (which heads a summary listing shows), Part and PartRef (a
// content-addressed chart, values or manifest, and a reference to one),
// Digest and Kind. A backend whose writes can leave garbage that later
// writes do not remove also implements Collector. A provider package has a
// constant Name, its HELM_DRIVER name, and an Opener it registers:
//
//	const Name = "mystore"
//
//	func init() { driver.Register(Name, Open) }
//
//	func Open(ctx context.Context, cfg *driver.Config) (driver.Backend, error)
//
// Config is what an Opener gets: the name, the connection string (which may
// hold a password: never put it in an error), the per-operation Timeout, a
// Log, and for Kubernetes backends a RESTClientGetter (held as any).
// ConnectionStringEnv names a backend's variable
// (HELM_DRIVER_<NAME>_CONNECTION_STRING).
//
// # Errors
//
// ErrReleaseNotFound, ErrReleaseExists and ErrInvalidKey have the texts of
// Helm's: a backend returns them, and each face maps them to its Helm's own
// values. ErrCorrupt (stored bytes that do not decode or verify),
// ErrUnavailable (the service cannot be reached or failed; never "not
// found"), ErrAccessDenied (the service refused the credentials or a
// right), ErrConflict (a write on a store without transactions that kept
// losing races; nothing was written) and ErrKeyUnavailable are helmstore's
// portable errors, the same under every face and backend.
//
// # The head seal
//
// Head.Body is the release without its parts, sealed by the engine over the
// head's key and part digests (Head.Seal): a backend stores it as it is. A
// head whose body, key or digests were changed apart from the others fails
// Head.Verify, and then its digests may name another release's parts: a
// backend deleting or replacing such a head must not drop references to
// them (DiffParts and PlanDelete apply that rule).
//
// # Helpers
//
// What every backend needs is written here once: Query.Matches and
// SortHeads for Heads; ListQuery.Select for List; DiffParts and
// Head.KeepCreatedAt for Update; PlanDelete for Delete; Head.AllLabels for
// stores that index labels; Head.DigestText and SetDigestText for digests
// as text; Chunks and JoinChunks for stores whose values are smaller than
// MaxPartBytes; MakeKey and ParseKey for Helm's keys. Package memstore is a
// complete backend to copy; package drivertest is the conformance suite to
// run on it.
package driver
