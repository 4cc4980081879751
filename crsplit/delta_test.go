package crsplit

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/driver/drivertest"
	"github.com/helmstore/helmstore/internal/testenv"
)

// TestDeltaBytesPerUpgrade measures the bytes stored per values-only
// upgrade of ~2 MB releases (Helm's flow: create the new revision,
// supersede the previous), with and without deltas, against what Helm's
// Secrets driver stores, and requires at most 1/30 of Helm's with deltas.
func TestDeltaBytesPerUpgrade(t *testing.T) {
	k := cluster(t)
	for _, f := range drivertest.UpgradeFixtures {
		t.Run(f.Name, func(t *testing.T) {
			const n = 10
			r1 := f.Release("big", "x", 1)
			js, _ := json.Marshal(r1)
			helm := int64(drivertest.HelmStoredBytes(t, f.Release("big", "x", 2)))
			per := map[bool]int64{}
			for _, deltas := range []bool{false, true} {
				ns := newNamespace(t, k)
				s, b := openAs(t, k, testenv.KubeAdmin, ns)
				backend.SetDeltas(s, deltas)
				m := drivertest.MeasureUpgrades(t, waitingStats{s, b}, n, func(v int) *release.Release { return f.Release("big", ns, v) })
				per[deltas] = m.PerUpgrade
				t.Logf("deltas %v: install %d bytes stored; %d bytes per values-only upgrade (heads %d, parts %d)",
					deltas, m.Install.StoredBytes(), m.PerUpgrade, m.HeadBytes, m.PartBytes)
				r, _ := openAs(t, k, testenv.KubeAdmin, ns, driver.WithCacheBytes(0))
				for i := 1; i <= n+1; i++ {
					got, err := r.Get(fmt.Sprintf("sh.helm.release.v1.big.v%d", i))
					if err != nil {
						t.Fatal(err)
					}
					if got.Manifest != f.Release("big", ns, i).Manifest {
						t.Fatalf("revision %d: manifest differs", i)
					}
				}
			}
			t.Logf("crsplit %s: release JSON %d bytes, manifest %d bytes; Helm stores %d bytes per revision; helmstore per values-only upgrade: %d bytes without deltas (1/%d of Helm), %d with (1/%d of Helm)",
				f.Name, len(js), len(r1.Manifest), helm, per[false], helm/max(per[false], 1), per[true], helm/max(per[true], 1))
			if per[true]*30 > helm {
				t.Errorf("%d bytes per values-only upgrade, more than 1/30 of Helm's %d", per[true], helm)
			}
		})
	}
}

// waitingStats is a store whose Stats first waits for the background
// commits of its backend, so that sizes are those of committed Releases.
type waitingStats struct {
	driver.Store
	b *kubeBackend
}

func (w waitingStats) Stats(ctx context.Context) (driver.Stats, error) {
	w.b.WaitCommits()
	return w.Store.Stats(ctx)
}
