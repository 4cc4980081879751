package readcount_test

import (
	"context"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/testing/readcount"
	"github.com/helmstore/helmstore/memstore"
)

func TestCounts(t *testing.T) {
	ctx := context.Background()
	be, err := memstore.Open(ctx, &driver.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := readcount.New(be)
	if _, err := c.Heads(ctx, driver.Query{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Parts(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.List(ctx, driver.ListQuery{}); err != nil {
		t.Fatal(err)
	}
	if p, h := c.Counts(); p != 1 || h != 1 {
		t.Fatalf("counts %d parts, %d heads; want 1 and 1 (List is not counted)", p, h)
	}
}
