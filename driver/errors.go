package driver

import (
	"errors"
	"fmt"
)

// The outcomes Helm's drivers report. Backends return these (wrapped or
// not); each face maps them to its Helm version's own sentinels, so that a
// caller of a helm3 or helm4 Store tests Helm's values with errors.Is. The
// texts are Helm's.
var (
	// ErrReleaseNotFound: no release has the key (Update, Delete).
	ErrReleaseNotFound = errors.New("release: not found")
	// ErrReleaseExists: Create found a release with the same key.
	ErrReleaseExists = errors.New("release: already exists")
	// ErrInvalidKey: a key is not of the form sh.helm.release.v1.<name>.v<version>.
	ErrInvalidKey = errors.New("release: invalid key")
)

// helmstore's own portable errors: every backend wraps the same values, so a
// caller tests errors.Is(err, ErrUnavailable) whatever the store.
var (
	// ErrCorrupt is wrapped by errors about stored bytes that fail to decode
	// or whose SHA-256 does not match their digest. The error names the
	// release.
	ErrCorrupt = errors.New("stored data is corrupted")

	// ErrConflict is wrapped by the error of a write (Create, Update or
	// Delete) that lost its compare-and-swap race with concurrent writers
	// more often than the store's retry policy allows before the
	// operation's deadline. Nothing was written, so retrying is safe. Only
	// stores without multi-object transactions race this way (crsplit,
	// and backends on package cas); SQL stores never return it.
	//
	// A stale Update is not a conflict: an Update of a release that another
	// store changed since this one read it overwrites it (last writer wins,
	// as in all of Helm's own drivers), because Helm's actions rely on it:
	// an upgrade Creates revision N+1 and then Updates N to "superseded",
	// and failing that Update would leave two deployed revisions. Helm
	// guards concurrent upgrades with Create's ErrReleaseExists instead.
	ErrConflict = errors.New("write kept losing to concurrent writers; nothing was written")

	// ErrUnavailable is wrapped when the store's service cannot be reached
	// (connection refused or reset, DNS failure, dial or I/O timeout) or
	// answers with a transport or server failure (a server that is
	// shutting down, out of resources, or an HTTP 5xx), so that callers can
	// tell "server down" from ErrReleaseNotFound or ErrCorrupt: an
	// unreachable store is never "not found". A write that fails this way
	// may or may not have been applied when only the answer was lost; the
	// store stays consistent either way (every write is atomic), and a
	// Get tells which. Errors about the request itself (a bad release, a
	// permission denied) do not wrap it.
	ErrUnavailable = errors.New("storage service unavailable")

	// ErrAccessDenied is wrapped when the store's service refuses the
	// store's credentials (a wrong password or user, none given where one
	// is required) or a permission the operation needs (an ACL rule): a
	// setting to fix, not an outage, so it does not wrap ErrUnavailable,
	// and never "not found". Nothing was read or written. The error never
	// shows the credentials.
	ErrAccessDenied = errors.New("access denied by the storage service")

	// ErrUnknownFormat is wrapped, beside ErrCorrupt, by the error about a
	// release stored in a release format this build does not read: one a
	// newer helmstore wrote (a later Helm release format), or one the
	// store's face does not speak. The error names the release and the
	// format; List skips the release and it stays deletable, as a corrupt
	// one does. Upgrading helmstore reads it.
	ErrUnknownFormat = errors.New("stored in a release format this build of helmstore cannot read")
)

// ReleaseError is the error every Store method returns for a failure that
// concerns one release. Err is the cause: for the outcomes Helm's drivers report,
// an error that matches both this package's sentinel and the face's Helm
// sentinel, otherwise the store's own error.
type ReleaseError struct {
	Op        string // "get", "create", "update", "delete", "query", "list"
	Namespace string // "" when the operation spans namespaces
	Key       string // the release key, when there is one
	Err       error
}

// Error names the operation, the release and the cause.
func (e *ReleaseError) Error() string {
	switch {
	case e.Key != "" && e.Namespace != "":
		return fmt.Sprintf("helmstore: %s release %q in namespace %q: %v", e.Op, e.Key, e.Namespace, e.Err)
	case e.Key != "":
		return fmt.Sprintf("helmstore: %s release %q: %v", e.Op, e.Key, e.Err)
	case e.Namespace != "":
		return fmt.Sprintf("helmstore: %s in namespace %q: %v", e.Op, e.Namespace, e.Err)
	}
	return fmt.Sprintf("helmstore: %s: %v", e.Op, e.Err)
}

// Unwrap returns the cause, so errors.Is(err, ErrReleaseNotFound) works.
func (e *ReleaseError) Unwrap() error { return e.Err }
