// Package testenv finds or starts the real services helmstore's tests run
// against: a service given by environment variable is used as is; otherwise
// the usual local address is probed; otherwise the service is started from
// local binaries (or with testcontainers where a Docker engine answers).
//
// When none of that works the test is skipped, unless
// HELMSTORE_REQUIRE_SERVICES=1 (set by .ci/run), in which case it fails: in
// CI a missing service is a failure, never a skip.
package testenv

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// RequireEnv is the environment variable that turns missing services into
// failures.
const RequireEnv = "HELMSTORE_REQUIRE_SERVICES"

// Required reports whether missing services must fail tests.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Unavailable ends t because service cannot be reached: a failure when
// services are required, a skip otherwise.
func Unavailable(t testing.TB, service string, err error) {
	t.Helper()
	msg := fmt.Sprintf("%s is not available: %v", service, err)
	if Required() {
		t.Fatalf("%s (%s=1: a missing service fails; see CONTRIBUTING.md \"Running the tests\")", msg, RequireEnv)
	}
	t.Skipf("%s (set %s=1 to fail instead of skipping; see CONTRIBUTING.md \"Running the tests\")", msg, RequireEnv)
}

var errNoDocker = errors.New("no Docker engine answers")

func getenv(k string) string { return os.Getenv(k) }

// reachable reports whether something accepts TCP connections at addr.
func reachable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// waitFor polls addr until it accepts connections or d passes.
func waitFor(addr string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if reachable(addr) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// run runs a command, returning its combined output in the error.
func run(name string, args ...string) error {
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %v: %s", name, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// UniqueName returns prefix followed by random hex, for databases, schemas
// and namespaces that must not collide between parallel test packages.
func UniqueName(prefix string) string {
	b := make([]byte, 6)
	rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	return port
}
