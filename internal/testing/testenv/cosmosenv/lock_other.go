//go:build !unix

package cosmosenv

// lockFile does not lock outside Unix: parallel test processes may then
// both install the test server (npm ci into the same directory).
func lockFile(path string) (unlock func(), err error) { return func() {}, nil }
