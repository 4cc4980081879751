package sqlbackend_test

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"testing"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// TestPartsOfManyRefs reads the parts of more references than a statement
// takes variables (SQLite allows 32,766): Helm's List of 10,000 releases of
// 3 revisions reads some 60,000, and failed on SQLite with "too many SQL
// variables". The release's own parts must come back among 40,000 absent
// ones, on every dialect.
func TestPartsOfManyRefs(t *testing.T) {
	sqlBackends(t, func(t *testing.T, s helm3.Store, be *sqlbackend.Backend) {
		ctx := context.Background()
		if err := s.Namespace("many").Create(sqltest.Key("app", 1), sqltest.Release("app", "many", 1)); err != nil {
			t.Fatal(err)
		}
		hs, err := be.Heads(ctx, driver.Query{Namespace: "many"})
		if err != nil || len(hs) != 1 {
			t.Fatalf("heads %v, %v", hs, err)
		}
		own := hs[0].Parts()
		var refs []driver.PartRef
		for i := range 40_000 {
			var n [8]byte
			binary.BigEndian.PutUint64(n[:], uint64(i))
			refs = append(refs, driver.PartRef{Namespace: []string{"many", "other"}[i%2], Kind: driver.KindValues, Digest: driver.Digest(sha256.Sum256(n[:]))})
			if i == 25_000 {
				refs = append(refs, own...) // in a later statement than the first
			}
		}
		frames, err := be.Parts(ctx, refs)
		if err != nil {
			t.Fatalf("Parts of %d refs: %v", len(refs), err)
		}
		if len(frames) != len(own) {
			t.Fatalf("Parts of %d refs returned %d frames, want the release's %d", len(refs), len(frames), len(own))
		}
		for _, r := range own {
			if len(frames[r.Digest]) == 0 {
				t.Fatalf("no frame for the release's %v part", r.Kind)
			}
		}
	})
}
