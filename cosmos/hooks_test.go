package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// The conformance harness's fault and data-loss hooks (drivertest.Proxied,
// drivertest.Wipe) for Cosmos DB.

// redialer returns the redial function (options.redial) that sends every
// address the client dials through proxy, but the addresses proxy returned.
func redialer(proxy drivertest.ProxyFunc) func(string) string {
	var mu sync.Mutex
	proxies := map[string]bool{} // the addresses proxy returned
	return func(addr string) string {
		mu.Lock()
		defer mu.Unlock()
		if proxies[addr] {
			return addr
		}
		p := proxy(addr)
		proxies[p] = true
		return p
	}
}

// proxiedConnString returns conn with its AccountEndpoint's host:port
// replaced by proxy(host:port), and the redial function that sends every
// other address the client dials through proxy too: the account properties
// name regional endpoints (the test server names its own address, an Azure
// account ACCOUNT-REGION.documents.azure.com), which the SDK then sends its
// requests to.
func proxiedConnString(conn string, proxy drivertest.ProxyFunc) (string, func(string) string, error) {
	through := redialer(proxy)
	pairs := strings.Split(conn, ";")
	found := false
	for i, pair := range pairs {
		k, v, ok := strings.Cut(pair, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "accountendpoint") {
			continue
		}
		u, err := url.Parse(strings.TrimSpace(v))
		if err != nil || u.Host == "" {
			return "", nil, fmt.Errorf("AccountEndpoint %q is not a URL", v)
		}
		host, port := u.Hostname(), u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		u.Host = through(net.JoinHostPort(host, port))
		pairs[i] = k + "=" + u.String()
		found = true
	}
	if !found {
		return "", nil, fmt.Errorf("the connection string has no AccountEndpoint")
	}
	return strings.Join(pairs, ";"), through, nil
}

// openProxied opens conn as openTest does, every connection of the store
// going through proxy, and returns Open's error. With rewrite, the
// connection string's AccountEndpoint names the proxy too
// (proxiedConnString; the test server's certificate is not verified);
// without, only the dials are redirected, so that TLS verifies the
// account's own host name.
func openProxied(t *testing.T, conn string, proxy drivertest.ProxyFunc, rewrite bool, opts ...helm3.Option) (helm3.Store, error) {
	redial := redialer(proxy)
	if rewrite {
		var err error
		if conn, redial, err = proxiedConnString(conn, proxy); err != nil {
			t.Fatalf("Proxied: %v", err)
		}
	}
	s, _, err := tryOpen(conn, options{redial: redial}, opts...)
	return s, err
}

// wipe deletes every item of the container of b behind its back, keeping
// the container, as a restore of an empty backup or a user emptying it in
// Data Explorer would. It first waits for the store's background commits
// (as the Tamperer does), so what is wiped is data at rest.
func wipe(t *testing.T, b *cas.Backend) {
	t.Helper()
	castest.WaitCommits(b)
	c := castest.ObjectStore(b).(*objectStore).c
	ctx := context.Background()
	pager := c.NewQueryItemsPager("SELECT c.id, c.pk FROM c", azcosmos.NewPartitionKey(), nil)
	type itemKey struct {
		ID string `json:"id"`
		PK string `json:"pk"`
	}
	var items []itemKey
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("wipe: listing the items: %v", mapError("query", "items", err))
		}
		for _, raw := range page.Items {
			var it itemKey
			if err := json.Unmarshal(raw, &it); err != nil {
				t.Fatalf("wipe: an item that is not JSON: %v", err)
			}
			items = append(items, it)
		}
	}
	for _, it := range items {
		if _, err := c.DeleteItem(ctx, azcosmos.NewPartitionKeyString(it.PK), it.ID, nil); err != nil {
			if err := mapError("delete", "item "+it.ID, err); !errors.Is(err, cas.ErrNotFound) {
				t.Fatalf("wipe: %v", err)
			}
		}
	}
	t.Logf("wiped %d items", len(items))
}

// itemsHold reports whether any item of b's container holds secret
// (drivertest.JSONHolds).
func itemsHold(t *testing.T, b *cas.Backend, secret []byte) bool {
	t.Helper()
	castest.WaitCommits(b)
	c := castest.ObjectStore(b).(*objectStore).c
	pager := c.NewQueryItemsPager("SELECT * FROM c", azcosmos.NewPartitionKey(), nil)
	n := 0
	for pager.More() {
		page, err := pager.NextPage(context.Background())
		if err != nil {
			t.Fatalf("listing the items: %v", mapError("query", "items", err))
		}
		for _, raw := range page.Items {
			n++
			if drivertest.JSONHolds(t, raw, secret) {
				return true
			}
		}
	}
	if n == 0 {
		t.Fatal("the container holds no item")
	}
	return false
}
