//go:build !unix

package testenv

import "context"

// lockFile is a no-op where flock is unavailable: there, do not build the
// Kubernetes binaries from two processes at once.
func lockFile(ctx context.Context, path string) (func(), error) { return func() {}, nil }
