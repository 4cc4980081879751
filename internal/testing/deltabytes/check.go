// Package deltabytes holds the check the backends' tests share of what a
// store keeps per values-only upgrade, with deltas and without, against what
// Helm's own drivers store. It is for tests only (it imports testing).
package deltabytes

import (
	"encoding/json"
	"fmt"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// Stores is what Check measures for one setting of deltas.
type Stores struct {
	// Store is the store the upgrades are written to and whose Stats are
	// measured, a view of Namespace, which holds nothing yet.
	Store helm3.Store
	// Namespace is the namespace of Store.
	Namespace string
	// Cold opens, once the upgrades are written, a store on the same data
	// without a part cache (helm3.WithCacheBytes(0)), viewing Namespace,
	// to read every revision back from storage.
	Cold func() helm3.Store
}

// Check measures, for each of two ~2 MB releases (fixture.ValuesOnlyRelease
// and fixture.Stack), the bytes a store keeps per values-only upgrade
// (Helm's flow: create the new revision, supersede the previous), with
// deltas off and on, against what Helm's own drivers store; reads every
// revision back from a store without caches; and fails if with deltas an
// upgrade stores more than 1/30 of what Helm stores. open returns fresh
// stores for one setting of deltas (with engine.Of(s).SetDeltas applied);
// what says which backend, in the log.
func Check(t *testing.T, what string, open func(t *testing.T, deltas bool) Stores) {
	for _, f := range upgradeFixtures {
		t.Run(f.name, func(t *testing.T) {
			const n = 10
			r1 := f.release("big", "x", 1)
			js, _ := json.Marshal(r1)
			helm := int64(helmStoredBytes(t, f.release("big", "x", 2)))
			per := map[bool]int64{}
			for _, deltas := range []bool{false, true} {
				st := open(t, deltas)
				m := measureUpgrades(t, st.Store, n, func(v int) *release.Release { return f.release("big", st.Namespace, v) })
				per[deltas] = m.perUpgrade
				t.Logf("deltas %v: install %d bytes stored; %d bytes per values-only upgrade (heads %d, parts %d)",
					deltas, m.install.StoredBytes(), m.perUpgrade, m.headBytes, m.partBytes)
				r := st.Cold()
				for i := 1; i <= n+1; i++ {
					got, err := r.Get(fmt.Sprintf("sh.helm.release.v1.big.v%d", i))
					if err != nil {
						t.Fatal(err)
					}
					if got.Manifest != f.release("big", st.Namespace, i).Manifest {
						t.Fatalf("revision %d: manifest differs", i)
					}
				}
			}
			t.Logf("%s %s: release JSON %d bytes, manifest %d bytes; Helm stores %d bytes per revision; helmstore per values-only upgrade: %d bytes without deltas (1/%d of Helm), %d with (1/%d of Helm)",
				what, f.name, len(js), len(r1.Manifest), helm, per[false], helm/max(per[false], 1), per[true], helm/max(per[true], 1))
			if per[true]*30 > helm {
				t.Errorf("%d bytes per values-only upgrade, more than 1/30 of Helm's %d", per[true], helm)
			}
		})
	}
}
