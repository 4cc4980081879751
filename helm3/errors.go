package helm3

import (
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/registry"
)

// Helm's own sentinel errors, re-exported so callers need one import. Every
// Store method's error for these outcomes matches them with errors.Is.
var (
	// ErrReleaseNotFound: no release has the key (or no release matches a Query).
	ErrReleaseNotFound = helmdriver.ErrReleaseNotFound
	// ErrReleaseExists: Create found a release with the same key.
	ErrReleaseExists = helmdriver.ErrReleaseExists
	// ErrInvalidKey: a key is not of the form sh.helm.release.v1.<name>.v<version>.
	ErrInvalidKey = helmdriver.ErrInvalidKey
)

// helmstore's own portable errors (package driver's), the same values under
// every face and backend.
var (
	// ErrCorrupt: stored bytes fail to decode or to match their digest (driver.ErrCorrupt).
	ErrCorrupt = driver.ErrCorrupt
	// ErrConflict: a write kept losing its compare-and-swap race (driver.ErrConflict).
	ErrConflict = driver.ErrConflict
	// ErrUnavailable: the store's service cannot be reached (driver.ErrUnavailable).
	ErrUnavailable = driver.ErrUnavailable
	// ErrAccessDenied: the service refused the credentials or a permission (driver.ErrAccessDenied).
	ErrAccessDenied = driver.ErrAccessDenied
	// ErrUnknownFormat: a release stored in a release format this build cannot read (driver.ErrUnknownFormat).
	ErrUnknownFormat = driver.ErrUnknownFormat
	// ErrUnknownDriver: a driver name that cannot be opened (registry.ErrUnknownDriver).
	ErrUnknownDriver = registry.ErrUnknownDriver
)

// ReleaseError is the error every Store method returns for a failure that
// concerns one release (driver.ReleaseError).
type ReleaseError = driver.ReleaseError
