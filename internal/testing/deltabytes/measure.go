package deltabytes

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// upgradeFixture is a release whose successive revisions are values-only
// upgrades, for measuring what an upgrade stores.
type upgradeFixture struct {
	name    string
	release func(name, ns string, v int) *release.Release
}

// upgradeFixtures are the ~2 MB releases whose values-only upgrades Check
// measures: fixture.ValuesOnlyRelease and a chart shaped like
// kube-prometheus-stack (fixture.Stack).
var upgradeFixtures = []upgradeFixture{
	{"values-only", fixture.ValuesOnlyRelease},
	{"stack", func(name, ns string, v int) *release.Release { return fixture.NewStack(1).Release(name, ns, v) }},
}

// helmStoredBytes is what Helm's Secrets, ConfigMaps and SQL drivers store
// for r: its JSON, gzip'd at best compression, base64'd.
func helmStoredBytes(t testing.TB, r *release.Release) int {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(b)
	w.Close()
	return base64.StdEncoding.EncodedLen(buf.Len())
}

// upgradeBytes is what measureUpgrades reports.
type upgradeBytes struct {
	install    helm3.Stats // after the install
	perUpgrade int64       // stored bytes (heads and parts) per upgrade
	headBytes  int64       // of which heads
	partBytes  int64       // of which parts
}

// measureUpgrades installs revision 1 of rel in the namespace of s (empty
// before), upgrades it n times as Helm does (create the new revision,
// supersede the previous one), and reports the bytes s stores (Stats) per
// upgrade. rel returns revision v, deployed.
func measureUpgrades(t testing.TB, s helm3.Store, n int, rel func(v int) *release.Release) upgradeBytes {
	t.Helper()
	ctx := context.Background()
	r1 := rel(1)
	if err := s.Create(driver.MakeKey(r1.Name, 1), r1); err != nil {
		t.Fatal(err)
	}
	before, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for v := 2; v <= n+1; v++ {
		r := rel(v)
		if err := s.Create(driver.MakeKey(r.Name, v), r); err != nil {
			t.Fatal(err)
		}
		prev := rel(v - 1)
		prev.Info.Status = release.StatusSuperseded
		if err := s.Update(driver.MakeKey(prev.Name, v-1), prev); err != nil {
			t.Fatal(err)
		}
	}
	after, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return upgradeBytes{install: before, perUpgrade: (after.StoredBytes() - before.StoredBytes()) / int64(n),
		headBytes: (after.HeadBytes - before.HeadBytes) / int64(n), partBytes: (after.PartBytes - before.PartBytes) / int64(n)}
}
