//go:build !unix

package filelock

import "context"

// Lock is a no-op where flock is unavailable: there, callers must not
// race each other from two processes.
func Lock(ctx context.Context, path string) (func(), error) { return func() {}, nil }
