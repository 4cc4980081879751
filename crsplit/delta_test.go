package crsplit

import (
	"context"
	"testing"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/testing/deltabytes"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// TestDeltaBytesPerUpgrade measures the bytes stored per values-only
// upgrade of ~2 MB releases with and without deltas, against what Helm's
// Secrets driver stores, and requires at most 1/30 of Helm's with deltas
// (deltabytes.Check).
func TestDeltaBytesPerUpgrade(t *testing.T) {
	k := cluster(t)
	deltabytes.Check(t, "crsplit", func(t *testing.T, deltas bool) deltabytes.Stores {
		ns := newNamespace(t, k)
		s, b := openAs(t, k, kubeenv.Admin, ns)
		engine.Of(s).SetDeltas(deltas)
		return deltabytes.Stores{Store: waitingStats{s, b}, Namespace: ns, Cold: func() helm3.Store {
			r, _ := openAs(t, k, kubeenv.Admin, ns, helm3.WithCacheBytes(0))
			return r
		}}
	})
}

// waitingStats is a store whose Stats first waits for the background
// commits of its backend, so that sizes are those of committed Releases.
type waitingStats struct {
	helm3.Store
	b *kubeBackend
}

func (w waitingStats) Stats(ctx context.Context) (helm3.Stats, error) {
	w.b.WaitCommits()
	return w.Store.Stats(ctx)
}
