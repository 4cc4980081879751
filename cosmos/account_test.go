package cosmos

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/cosmosenv"
)

// TestConformanceAccount runs the whole drivertest suite (damage tests
// included) on the Cosmos DB account or emulator HELMSTORE_TEST_COSMOS
// names, in a container of its own for each store, deleted when the test
// ends. The variable holds a connection string of the store's form:
//
//	AccountEndpoint=https://ACCOUNT.documents.azure.com:443/;AccountKey=KEY;Database=helmstore-test;
//
// (Database defaults to "helm"; no AccountKey: Azure AD; the emulator:
// AccountEndpoint=https://localhost:8081/;AccountKey=<its public
// key>;InsecureSkipVerify=true;AllowWeakConsistency=true;). A Container
// given there is ignored: each store gets a new one. Without the variable
// the test is skipped: the one Cosmos DB skip HELMSTORE_REQUIRE_SERVICES=1
// allows, since every other test runs on the local test server.
func TestConformanceAccount(t *testing.T) {
	base := os.Getenv(cosmosenv.Env)
	if base == "" {
		t.Skipf("no Cosmos DB account or emulator to test against: set %s=AccountEndpoint=https://...;AccountKey=...;Database=...; "+
			"(the one skip %s=1 allows: every other Cosmos DB test runs on the local test server)", cosmosenv.Env, testenv.RequireEnv)
	}
	set, err := parseConnectionString(base)
	if err != nil {
		t.Fatalf("%s: %v", cosmosenv.Env, err)
	}
	var o opened
	h := drivertest.Harness{
		Open: func(t *testing.T) helm3.Store {
			container := testenv.UniqueName("c")
			t.Cleanup(func() { dropContainer(t, set, container) })
			return o.open(t, withContainer(base, container))
		},
		Reopen: func(t *testing.T, s helm3.Store, opts ...helm3.Option) helm3.Store {
			return o.open(t, o.conn(t, "Reopen", s), opts...)
		},
		Tamper: func(t *testing.T, s helm3.Store) drivertest.Tamperer {
			b := o.backend(t, "Tamper", s)
			return castest.WithEmbedded(newTamperer(b), castest.ObjectStore(b))
		},
		Proxied: func(t *testing.T, s helm3.Store, proxy drivertest.ProxyFunc, opts ...helm3.Option) (helm3.Store, error) {
			return openProxied(t, o.conn(t, "Proxied", s), proxy, false, opts...)
		},
		Wipe: func(t *testing.T, s helm3.Store) { wipe(t, o.backend(t, "Wipe", s)) },
	}
	drivertest.Run(t, h)
	checkSizes(t)
}

// withContainer returns conn naming container (any Container it had is
// replaced).
func withContainer(conn, container string) string {
	var out []string
	for _, pair := range strings.Split(conn, ";") {
		k, _, _ := strings.Cut(pair, "=")
		if strings.TrimSpace(pair) == "" || strings.EqualFold(strings.TrimSpace(k), "container") {
			continue
		}
		out = append(out, pair)
	}
	return strings.Join(append(out, "Container="+container), ";") + ";"
}

// dropContainer deletes a container the test created.
func dropContainer(t *testing.T, set settings, container string) {
	client, err := newClient(set, options{}, &accountInfo{})
	if err != nil {
		t.Logf("deleting container %s: %v", container, err)
		return
	}
	c, err := client.NewContainer(set.database, container)
	if err == nil {
		_, err = c.Delete(context.Background(), nil)
	}
	if err != nil {
		t.Logf("deleting container %s: %v", container, mapError("delete", "container "+container, err))
	}
}
