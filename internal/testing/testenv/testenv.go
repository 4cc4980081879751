// Package testenv is what every test that needs a real service shares: the
// rule for a service that is missing (skipped, or failed under
// HELMSTORE_REQUIRE_SERVICES=1, as .ci/run sets: in CI a missing service is
// a failure, never a skip), fault injection on the network path to one
// (Proxy, NewLossyProxy, Blackhole), and the helpers its subpackages start
// servers with (StartServer, Proc, Shared, WriteCerts).
//
// Each service has a package of its own, so that a backend's tests link
// only the clients of the services they use: kubeenv (etcd and
// kube-apiserver), sqlenv (PostgreSQL, MySQL and MariaDB), redisenv (Redis:
// one server, Cluster, Sentinel) and cosmosenv (a Cosmos DB test server).
// Each finds or starts its service the same way: a service given by
// environment variable is used as is; otherwise the usual local address is
// probed; otherwise the service is started from local binaries (or with
// testcontainers where a Docker engine answers).
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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

// Reachable reports whether something accepts TCP connections at addr.
func Reachable(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// WaitReachable polls addr until it accepts connections or d passes.
func WaitReachable(addr string, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if Reachable(addr) {
			return true
		}
		time.Sleep(100 * time.Millisecond)
	}
	return false
}

// Run runs a command, returning its combined output in the error.
func Run(name string, args ...string) error {
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

// WaitFor polls cond every 100ms until it returns true or ctx ends.
func WaitFor(ctx context.Context, cond func() bool) bool {
	for {
		if cond() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Tail returns at most the last n bytes of b, as text, for error messages
// that quote a server's log or a command's output.
func Tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}
