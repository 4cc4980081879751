package cas_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// TestTwoStoresAlternating runs castest.Alternate (two stores taking turns
// over one data, one reopened now and then, exact Stats checks) on a Store
// whose replaces take a moment, so that one store's background commit
// overlaps the other's next operation.
func TestTwoStoresAlternating(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			data := castest.New(nil)
			castest.Alternate(t, seed, 1200, func(t *testing.T) (helm3.Store, *cas.Backend) {
				proc := data.Process(nil).Slow(func(op castest.Op) time.Duration {
					if op.Call == castest.CallReplace {
						return time.Duration(op.Seq%3) * time.Millisecond
					}
					return 0
				})
				return open(proc, helm3.DefaultCacheBytes)
			})
		})
	}
}
