package redis

import "errors"

// IsUnavailable reports whether err says Redis could not be reached or
// used (for tests in package redis_test): driver.ErrUnavailable.
func IsUnavailable(err error) bool { return errors.Is(err, errUnavailable) }
