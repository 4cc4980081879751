package cosmos

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
)

// Name is the driver name the package registers.
const Name = "cosmos"

func init() {
	driver.Register(Name, Open)
}

// Sizes of the protocol's objects on Cosmos DB (cas.Config). A chunk of
// 1 MiB is about 1.4 MB of base64 in its item, well under the 2 MB item
// limit; a head keeps a body up to 384 KiB (512 KiB of base64) inline,
// leaving more than 1 MB for labels; a part up to 8 KiB is kept in its own
// item (adding a referrer to a part rewrites the item, and its request
// charge grows with the item's size), larger ones go to chunks.
const (
	InlinePartBytes = 8 << 10
	InlineBodyBytes = 384 << 10
	ChunkBytes      = 1 << 20
)

// options are what tests change when opening a store.
type options struct {
	counter *counter
	observe func(kind cas.Kind, size int)
	// protocol, if set, replaces the protocol's configuration (sizes,
	// retries); perCall policies run first on every call, before retries.
	protocol *cas.Config
	perCall  []policy.Policy
	// wrap, if set, wraps the object store the protocol runs on (to
	// break it on purpose).
	wrap func(cas.ObjectStore) cas.ObjectStore
	// redial, if set, maps every address the client dials to the one it
	// dials instead (httpClient).
	redial func(addr string) string
}

// Open opens the Cosmos DB container cfg.ConnectionString names (see
// parseConnectionString), creating the database and the container if they
// are missing.
func Open(ctx context.Context, cfg *driver.Config) (driver.Backend, error) {
	b, err := open(ctx, cfg, options{})
	if err != nil {
		return nil, err // not a typed nil
	}
	return b, nil
}

func open(ctx context.Context, cfg *driver.Config, o options) (*cas.Backend, error) {
	set, err := parseConnectionString(cfg.ConnectionString)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.Timeout)
		defer cancel()
	}
	ctx = bindOpen(ctx)
	account := &accountInfo{}
	client, err := newClient(set, o, account)
	if err != nil {
		return nil, err
	}
	c, err := ensureContainer(ctx, client, set.database, set.container)
	if err != nil {
		return nil, err
	}
	if err := account.check(set.allowWeak); err != nil {
		return nil, err
	}
	st := &objectStore{c: c, observe: o.observe}
	pc := cas.Config{InlinePartBytes: InlinePartBytes, InlineBodyBytes: InlineBodyBytes, ChunkBytes: ChunkBytes}
	if o.protocol != nil {
		pc = *o.protocol
	}
	pc.Log = cfg.Log
	if cfg.Timeout > 0 {
		pc.CloseTimeout = cfg.Timeout // Close honours the store's timeout
	}
	var store cas.ObjectStore = st
	if o.wrap != nil {
		store = o.wrap(st)
	}
	b := cas.New(store, pc)
	return b, nil
}

// newClient returns the SDK client for set: a key credential when the
// connection string has AccountKey, Azure AD (azidentity's default chain)
// otherwise; the account properties the SDK reads go to account. 429 answers are retried after the service's x-ms-retry-after-ms
// until the operation's context ends (throttlePolicy); 408 and 5xx up to 3
// times, for reads only (a write whose answer was lost is for the protocol
// to sort out, not to replay).
func newClient(set settings, o options, account *accountInfo) (*azcosmos.Client, error) {
	opts := &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{
		Transport:        countingTransport{next: accountTransport{next: httpClient(set.insecure, o.redial), info: account}, c: o.counter},
		PerCallPolicies:  append([]policy.Policy{boundPolicy{}}, o.perCall...),
		PerRetryPolicies: []policy.Policy{throttlePolicy{}},
		Retry:            policy.RetryOptions{MaxRetries: 3, RetryDelay: 200 * time.Millisecond, MaxRetryDelay: 30 * time.Second, ShouldRetry: shouldRetry},
	}}
	if set.key == "" {
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("cosmos: no AccountKey in the connection string, and no Azure AD credential: %w", err)
		}
		return azcosmos.NewClient(set.endpoint, cred, opts)
	}
	cred, err := azcosmos.NewKeyCredential(set.key)
	if err != nil {
		return nil, errors.New("cosmos: AccountKey is not a valid key (base64)")
	}
	return azcosmos.NewClientWithKey(set.endpoint, cred, opts)
}

// shouldRetry is the SDK retry policy's test: transport errors (the SDK's
// own policy has already refused to replay writes that may have been
// sent), 408 and 5xx for reads and queries only. (429 is throttlePolicy's.)
func shouldRetry(resp *http.Response, err error) bool {
	if err != nil {
		return true
	}
	switch resp.StatusCode {
	case http.StatusRequestTimeout, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		req := resp.Request
		return req != nil && (req.Method == http.MethodGet || req.Header.Get("x-ms-documentdb-query") != "")
	}
	return false
}

// IndexingPolicy is the indexing policy of the container Open creates: only
// the fields queries filter on (kind, namespace, name, labels) are
// indexed; bodies, chunk data and referrers are not. Those who create the
// container themselves should use the same policy, partition key path /pk
// (hash, version 2).
func IndexingPolicy() *azcosmos.IndexingPolicy {
	return &azcosmos.IndexingPolicy{
		Automatic:    true,
		IndexingMode: azcosmos.IndexingModeConsistent,
		IncludedPaths: []azcosmos.IncludedPath{
			{Path: "/k/?"}, {Path: "/ns/?"}, {Path: "/n/?"}, {Path: "/lkv/[]/?"}, {Path: "/lk/[]/?"},
		},
		ExcludedPaths: []azcosmos.ExcludedPath{{Path: "/*"}},
	}
}

// ensureContainer returns the container, creating the database and the
// container (partition key /pk, IndexingPolicy) when they are missing.
func ensureContainer(ctx context.Context, client *azcosmos.Client, database, container string) (*azcosmos.ContainerClient, error) {
	c, err := client.NewContainer(database, container)
	if err != nil {
		return nil, err
	}
	_, err = c.Read(ctx, nil)
	if err == nil {
		return c, nil
	}
	if code, _ := statusOf(err); code != http.StatusNotFound {
		return nil, mapError("open", "container "+container, err)
	}
	if _, err := client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: database}, nil); err != nil {
		if code, _ := statusOf(err); code != http.StatusConflict {
			return nil, mapError("create", "database "+database, err)
		}
	}
	db, err := client.NewDatabase(database)
	if err != nil {
		return nil, err
	}
	props := azcosmos.ContainerProperties{ID: container,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Kind: azcosmos.PartitionKeyKindHash, Paths: []string{"/pk"}, Version: 2},
		IndexingPolicy:         IndexingPolicy(),
	}
	if _, err := db.CreateContainer(ctx, props, nil); err != nil {
		if code, _ := statusOf(err); code != http.StatusConflict {
			return nil, mapError("create", "container "+container, err)
		}
	}
	return c, nil
}
