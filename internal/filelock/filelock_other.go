//go:build !unix

package filelock

import "context"

// Lock is a no-op where flock is unavailable: there, callers must not
// race each other from two processes.
func Lock(ctx context.Context, path string) (func(), error) { return func() {}, nil }

// LockLike is Lock: where flock is unavailable there is no lock file.
func LockLike(ctx context.Context, path, like string) (func(), error) { return Lock(ctx, path) }
