// Package cosmosenv starts the Cosmos DB API test server the cosmos
// backend's tests run against (Endpoint), and names the real account or
// emulator a test run may be given instead (Env).
package cosmosenv

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// Env names a real Cosmos DB account or the official emulator for
// tests: a connection string of the cosmos backend's form
// (AccountEndpoint=...;AccountKey=...;). Without it the tests that need a
// real account are skipped; every other Cosmos test runs on the local test
// server (Endpoint).
const Env = "HELMSTORE_TEST_COSMOS"

// Key is the key the local test server is opened with (it accepts
// any; this is the emulator's public key, so it is no secret).
const Key = "C2y6yDjf5/R+ob0N8A7Cgv30VRDJIWEHLM+4QDU5DE2nQ9nDuVTqobD4b8mGGyPMbIZnqyMsEcaGQy67XIw/Jw=="

// cosmosPackage is the npm package of the test server, pinned with its
// dependencies by tools/cosmos-server/package-lock.json.
const cosmosPackage = "@vercel/cosmosdb-server"

var (
	cosmosServer testenv.Shared[string]
	cosmosProc   *testenv.Proc
)

// Endpoint returns the endpoint (https://127.0.0.1:PORT) of a Cosmos DB API
// test server: @vercel/cosmosdb-server, installed once with npm ci from
// tools/cosmos-server's lockfile into ~/.cache/helmstore/cosmos-server
// (under a lock, so parallel test processes do not race), and started by
// this process on a free loopback port (by tools/cosmos-server/serve.js,
// with keep-alive as Azure serves), HTTPS with a self-signed
// certificate (clients must skip verification). Tests share it, each in its
// own database or container; Stop stops it. Without node and npm the
// test is skipped, or fails under HELMSTORE_REQUIRE_SERVICES=1.
func Endpoint(t testing.TB) string {
	t.Helper()
	return cosmosServer.Get(t, "the Cosmos DB test server", startCosmos)
}

// Stop stops the test server Endpoint started, if any (call it from
// TestMain after m.Run; the kernel kills it anyway when the test process
// dies).
func Stop() {
	if cosmosProc != nil {
		cosmosProc.Stop(5 * time.Second)
	}
}

// cosmosSourceDir is tools/cosmos-server in the module this file is in.
func cosmosSourceDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return "", errors.New("cannot locate the source tree")
	}
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "tools", "cosmos-server")
	if _, err := os.Stat(filepath.Join(dir, "package-lock.json")); err != nil {
		return "", fmt.Errorf("the pinned test server's lockfile: %w", err)
	}
	return dir, nil
}

// installCosmosServer installs the pinned server into a cache directory
// named by the lockfile's hash and returns the path of its cli.js.
func installCosmosServer() (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("node is not installed (the Cosmos DB test server is a Node program): %w", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm is not installed (it installs the Cosmos DB test server): %w", err)
	}
	src, err := cosmosSourceDir()
	if err != nil {
		return "", err
	}
	pkg, err := os.ReadFile(filepath.Join(src, "package.json"))
	if err != nil {
		return "", err
	}
	lock, err := os.ReadFile(filepath.Join(src, "package-lock.json"))
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(append(append([]byte{}, pkg...), lock...))
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	base := filepath.Join(cache, "helmstore", "cosmos-server")
	dir := filepath.Join(base, hex.EncodeToString(sum[:8]))
	cli := filepath.Join(dir, "node_modules", cosmosPackage, "lib", "cli.js")
	stamp := filepath.Join(dir, ".installed")
	if _, err := os.Stat(stamp); err == nil {
		return cli, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	unlock, err := lockFile(filepath.Join(base, "install.lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(stamp); err == nil {
		return cli, nil // another process installed it meanwhile
	}
	for name, b := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm ci in %s: %v: %s", dir, err, testenv.Tail(out, 1500))
	}
	if _, err := os.Stat(cli); err != nil {
		return "", fmt.Errorf("npm ci installed no %s: %w", cli, err)
	}
	if err := patchCosmosServer(filepath.Dir(cli)); err != nil {
		return "", err
	}
	return cli, os.WriteFile(stamp, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644)
}

// patchCosmosServer fixes one bug of the pinned server: a point read of an
// item that does not exist answers 500 (a TypeError on the missing item)
// where Cosmos DB answers 404. The backend must never take a server error
// for "not found", so the test server is made to answer as Cosmos DB does.
func patchCosmosServer(lib string) error {
	path := filepath.Join(lib, "handler", "read-document.js")
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	const bug, fix = "if (data[path] !== clientKeys[i])", "if (!data || data[path] !== clientKeys[i])"
	s := string(b)
	if !strings.Contains(s, bug) {
		return fmt.Errorf("%s: the line patched for missing items (%q) is not there: was the server upgraded?", path, bug)
	}
	return os.WriteFile(path, []byte(strings.Replace(s, bug, fix, 1)), 0o644)
}

func startCosmos() (string, error) {
	cli, err := installCosmosServer()
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "helmstore-cosmos-")
	if err != nil {
		return "", err
	}
	src, err := cosmosSourceDir()
	if err != nil {
		return "", err
	}
	// Our launcher (keep-alive, as Azure serves), not the package's cli.js.
	serve, index := filepath.Join(src, "serve.js"), filepath.Join(filepath.Dir(cli), "index.js")
	p, addr, err := testenv.StartOnFreePort(dir, "cosmosdb-server", "node", func(port int) []string {
		return []string{serve, index, strconv.Itoa(port), "127.0.0.1"}
	}, 60*time.Second)
	if err != nil {
		return "", fmt.Errorf("the Cosmos DB test server: %w", err)
	}
	cosmosProc = p
	return "https://" + addr, nil
}
