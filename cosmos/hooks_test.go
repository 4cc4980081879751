package cosmos

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/helmstore/helmstore/driver/backend/cas"
)

// The conformance harness's data-loss hook (drivertest.Wipe) for Cosmos DB.

// wipe deletes every item of the container of b behind its back, keeping
// the container, as a restore of an empty backup or a user emptying it in
// Data Explorer would. It first waits for the store's background commits
// (as the Tamperer does), so what is wiped is data at rest.
func wipe(t *testing.T, b *cas.Backend) {
	t.Helper()
	b.WaitCommits()
	c := b.Store().(*objectStore).c
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
