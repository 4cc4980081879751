package cas

import (
	"errors"

	"github.com/helmstore/helmstore/driver"
)

// The outcomes an ObjectStore reports with these errors (wrapped or not),
// and with no others.
var (
	// ErrExists: Create found an object of the same kind, namespace and
	// name.
	ErrExists = errors.New("object exists")
	// ErrNotFound: the object named does not exist. Never for a store,
	// namespace or collection that cannot be reached or does not exist.
	ErrNotFound = errors.New("object not found")
	// ErrVersionMismatch: Replace or Delete found the object at another
	// version than the one given (changed, or deleted and created again,
	// since it was read).
	ErrVersionMismatch = errors.New("object version mismatch")
)

// ErrConflict (driver.ErrConflict) is wrapped when a write kept losing
// compare-and-swap races to other writers until its retry policy (bounded
// by the operation's context deadline) gave up: nothing of the operation
// is visible to readers, and retrying it is safe.
var ErrConflict = driver.ErrConflict
