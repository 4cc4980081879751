package drivertest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/fixture"
)

// UpgradeFixture is a release whose successive revisions are values-only
// upgrades, for measuring what an upgrade stores.
type UpgradeFixture struct {
	Name    string
	Release func(name, ns string, v int) *release.Release
}

// UpgradeFixtures are the ~2 MB releases whose values-only upgrades the
// delta measurements of every backend use: ValuesOnlyRelease and a chart
// shaped like kube-prometheus-stack (fixture.Stack).
var UpgradeFixtures = []UpgradeFixture{
	{"values-only", ValuesOnlyRelease},
	{"stack", func(name, ns string, v int) *release.Release { return fixture.NewStack(1).Release(name, ns, v) }},
}

// ValuesOnlyRelease returns revision v of a ~2.1 MB release (the large
// fixture chart, ~1.9 MB of its JSON) with a ~230 KB manifest, as a
// values-only upgrade leaves it: from one revision to the next only an image
// tag changes, in the values and in a few lines of the manifest.
func ValuesOnlyRelease(name, ns string, v int) *release.Release {
	ch := fixture.New(1).Chart(fixture.LargeChartOptions)
	g := fixture.New(5)
	values := g.Values(40)
	values["image"] = map[string]interface{}{"repository": "registry.example/" + name, "tag": fmt.Sprintf("v1.%d.0", v)}
	r := g.Release(name, ns, v, ch, values, release.StatusDeployed, 1000)
	docs := strings.Split(fixture.New(6).Manifest(name, 230000), "---\n")
	for _, i := range []int{1, 17, 42, 90} {
		if i < len(docs) {
			docs[i] += fmt.Sprintf("  image: registry.example/%s:v1.%d.0\n", name, v)
		}
	}
	r.Manifest = strings.Join(docs, "---\n")
	return r
}

// HelmStoredBytes is what Helm's Secrets, ConfigMaps and SQL drivers store
// for r: its JSON, gzip'd at best compression, base64'd.
func HelmStoredBytes(t testing.TB, r *release.Release) int {
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

// UpgradeBytes is what MeasureValuesOnlyUpgrades reports.
type UpgradeBytes struct {
	Install    helm3.Stats // after the install
	PerUpgrade int64       // stored bytes (heads and parts) per upgrade
	HeadBytes  int64       // of which heads
	PartBytes  int64       // of which parts
}

// MeasureValuesOnlyUpgrades installs ValuesOnlyRelease name in the
// namespace of s (empty before), upgrades it n times as Helm does (create
// the new revision, supersede the previous one), and reports the bytes s
// stores (Stats) per upgrade.
func MeasureValuesOnlyUpgrades(t testing.TB, s helm3.Store, name, ns string, n int) UpgradeBytes {
	t.Helper()
	return MeasureUpgrades(t, s, n, func(v int) *release.Release { return ValuesOnlyRelease(name, ns, v) })
}

// MeasureUpgrades is MeasureValuesOnlyUpgrades for the revisions rel
// returns (revision v, deployed; 1 is the install), such as
// fixture.Stack.Release.
func MeasureUpgrades(t testing.TB, s helm3.Store, n int, rel func(v int) *release.Release) UpgradeBytes {
	t.Helper()
	ctx := context.Background()
	r1 := rel(1)
	if err := s.Create(key(r1.Name, 1), r1); err != nil {
		t.Fatal(err)
	}
	before, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for v := 2; v <= n+1; v++ {
		r := rel(v)
		if err := s.Create(key(r.Name, v), r); err != nil {
			t.Fatal(err)
		}
		prev := rel(v - 1)
		prev.Info.Status = release.StatusSuperseded
		if err := s.Update(key(prev.Name, v-1), prev); err != nil {
			t.Fatal(err)
		}
	}
	after, err := s.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return UpgradeBytes{Install: before, PerUpgrade: (after.StoredBytes() - before.StoredBytes()) / int64(n),
		HeadBytes: (after.HeadBytes - before.HeadBytes) / int64(n), PartBytes: (after.PartBytes - before.PartBytes) / int64(n)}
}
