package sqlbackend_test

import (
	"testing"

	"github.com/helmstore/helmstore/internal/engine"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/deltabytes"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
)

// TestDeltaBytesPerUpgrade measures the bytes stored per values-only
// upgrade of ~2 MB releases with and without deltas, against what Helm
// stores, and requires at most 1/30 of Helm's with deltas
// (deltabytes.Check), on each dialect.
func TestDeltaBytesPerUpgrade(t *testing.T) {
	for _, d := range dialects {
		t.Run(d.name, func(t *testing.T) {
			if testing.Short() && d.name != "sqlite" {
				t.Skip("short")
			}
			deltabytes.Check(t, d.name, func(t *testing.T, deltas bool) deltabytes.Stores {
				conn := d.conn(t) // a new database
				s := sqltest.Open(t, d.name, conn)
				t.Cleanup(func() { s.Close() })
				engine.Of(s).SetDeltas(deltas)
				const ns = "upgrades"
				return deltabytes.Stores{Store: s.Namespace(ns), Namespace: ns, Cold: func() helm3.Store {
					r := sqltest.Open(t, d.name, conn, helm3.WithCacheBytes(0))
					t.Cleanup(func() { r.Close() })
					return r.Namespace(ns)
				}}
			})
		})
	}
}
