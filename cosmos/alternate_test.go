package cosmos

import (
	"fmt"
	"testing"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// TestTwoStoresAlternating runs castest.Alternate on the test server: two
// stores on one container taking turns, one reopened now and then, with
// exact Stats checks against the parts the stored heads reference (an
// Update of a release the other store had deleted leaked its new parts).
func TestTwoStoresAlternating(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel() // each seed on a container of its own
			conn := connString(t)
			castest.Alternate(t, seed, 1200, func(t *testing.T) (helm3.Store, *cas.Backend) {
				s, b := openTest(t, conn, options{})
				return s.Namespace(castest.Namespace), b
			})
		})
	}
}
