package driver

import "errors"

// ErrKeyUnavailable is returned when stored data is encrypted under a
// key-encryption key the store was not given (or that refuses it), and
// when a store opened without encryption keys reads encrypted data; the
// message names the key's id.
var ErrKeyUnavailable = errors.New("encryption key unavailable")
