package sqlbackend_test

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/driver/drivertest"
	"github.com/helmstore/helmstore/internal/testenv"
	"github.com/helmstore/helmstore/sql/sqltest"
)

// TestDeltaBytesPerUpgrade measures the bytes stored per values-only
// upgrade of ~2 MB releases (Helm's flow: create the new revision,
// supersede the previous), with and without deltas, against what Helm
// stores, and requires at most 1/30 of Helm's with deltas.
func TestDeltaBytesPerUpgrade(t *testing.T) {
	for _, d := range []struct {
		name string
		conn func(t testing.TB) string
	}{
		{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "helm.db") }},
		{"postgres", func(t testing.TB) string { testenv.PostgresServer(t); return testenv.Postgres(t) }},
		{"mysql", func(t testing.TB) string { testenv.MySQLServer(t); return testenv.MySQL(t) }},
	} {
		for _, f := range drivertest.UpgradeFixtures {
			t.Run(d.name+"/"+f.Name, func(t *testing.T) {
				if testing.Short() && d.name != "sqlite" {
					t.Skip("short")
				}
				conn := d.conn(t)
				s := sqltest.Open(t, d.name, conn)
				defer s.Close()
				const n = 10
				r1 := f.Release("big", "x", 1)
				js, _ := json.Marshal(r1)
				helm := int64(drivertest.HelmStoredBytes(t, f.Release("big", "x", 2)))
				per := map[bool]int64{}
				for _, deltas := range []bool{false, true} {
					ns := map[bool]string{false: "full", true: "delta"}[deltas]
					backend.SetDeltas(s, deltas)
					m := drivertest.MeasureUpgrades(t, s.Namespace(ns), n, func(v int) *release.Release { return f.Release("big", ns, v) })
					per[deltas] = m.PerUpgrade
					t.Logf("deltas %v: install %d bytes stored; %d bytes per values-only upgrade (heads %d, parts %d)",
						deltas, m.Install.StoredBytes(), m.PerUpgrade, m.HeadBytes, m.PartBytes)
					// Every revision reads back, from a store with no caches.
					r := sqltest.Open(t, d.name, conn, driver.WithCacheBytes(0)).Namespace(ns)
					for i := 1; i <= n+1; i++ {
						got, err := r.Get(fmt.Sprintf("sh.helm.release.v1.big.v%d", i))
						if err != nil {
							t.Fatal(err)
						}
						if got.Manifest != f.Release("big", ns, i).Manifest {
							t.Fatalf("revision %d: manifest differs", i)
						}
					}
					r.Close()
				}
				t.Logf("%s %s: release JSON %d bytes, manifest %d bytes; Helm stores %d bytes per revision; helmstore per values-only upgrade: %d bytes without deltas (1/%d of Helm), %d with (1/%d of Helm)",
					d.name, f.Name, len(js), len(r1.Manifest), helm, per[false], helm/max(per[false], 1), per[true], helm/max(per[true], 1))
				if per[true]*30 > helm {
					t.Errorf("%d bytes per values-only upgrade, more than 1/30 of Helm's %d", per[true], helm)
				}
			})
		}
	}
}
