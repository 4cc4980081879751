package cas_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// keepsChunks is an object store whose Delete of a chunk object answers
// that it deleted it, and keeps it: garbage stays behind.
type keepsChunks struct{ cas.ObjectStore }

func (s keepsChunks) Delete(ctx context.Context, ref cas.Ref, version string) error {
	if ref.Kind == cas.KindChunk {
		return nil
	}
	return s.ObjectStore.Delete(ctx, ref, version)
}

// TestCrashPointsCatchBrokenStores checks that the crash-point runs fail on
// a protocol whose store breaks what it rests on: each broken store must
// make some run of the install scenario report a violation of the kind
// expected.
func TestCrashPointsCatchBrokenStores(t *testing.T) {
	t.Parallel()
	scs := scenarios()
	for _, c := range []struct {
		name  string
		sc    scenario
		adder bool
		wrap  func(cas.ObjectStore) cas.ObjectStore
		want  string
	}{
		// A crash after the head is created and before its parts:
		// readers see a release with missing parts.
		{"heads visible at once", scs[0], true, func(s cas.ObjectStore) cas.ObjectStore { return castest.NoPending{ObjectStore: s} }, "reading back"},
		// Chunks of deleted parts stay: the store is not empty once
		// everything is deleted.
		{"chunks not deleted", scs[4], false, func(s cas.ObjectStore) cas.ObjectStore { return keepsChunks{s} }, "objects left"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var found []string
			for n := 0; n < 40 && len(found) == 0; n++ {
				r := run{sc: c.sc, adder: c.adder, wrap: c.wrap, plan: castest.CrashAt(n), desc: fmt.Sprintf("crash@%d", n)}
				for _, v := range r.exec().Violations {
					if strings.Contains(v, c.want) {
						found = append(found, v)
					}
				}
			}
			if len(found) == 0 {
				t.Fatalf("no run reported a violation mentioning %q", c.want)
			}
			t.Logf("caught: %.200s", found[0])
		})
	}
}
