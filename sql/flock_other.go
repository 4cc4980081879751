//go:build !unix

package sql

import "context"

// lockFile is a no-op where flock is unavailable: there, do not open a fresh
// sqlite file from two processes at once.
func lockFile(ctx context.Context, path string) (func(), error) { return func() {}, nil }
