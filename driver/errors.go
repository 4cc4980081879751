package driver

import (
	"fmt"

	helmdriver "helm.sh/helm/v3/pkg/storage/driver"

	"github.com/helmstore/helmstore/internal/codec"
)

// Helm's own sentinel errors, re-exported so callers need one import.
var (
	// ErrReleaseNotFound: no release has the key (or no release matches a Query).
	ErrReleaseNotFound = helmdriver.ErrReleaseNotFound
	// ErrReleaseExists: Create found a release with the same key.
	ErrReleaseExists = helmdriver.ErrReleaseExists
	// ErrInvalidKey: a key is not of the form sh.helm.release.v1.<name>.v<version>.
	ErrInvalidKey = helmdriver.ErrInvalidKey
)

// ErrCorrupt is wrapped by errors about stored bytes that fail to decode or
// whose SHA-256 does not match their digest. The error names the release.
var ErrCorrupt = codec.ErrCorrupt

// ReleaseError is the error every Store method returns for a failure that
// concerns one release. Err is the cause: a Helm sentinel for the outcomes
// Helm's drivers report, otherwise the store's own error.
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
