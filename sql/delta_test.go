package sql_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/fixture"
	"github.com/helmstore/helmstore/internal/testenv"
)

// valuesOnlyUpgrade returns revision v of a ~2 MB release (the large chart)
// with a ~230 KB manifest, where each revision changes only values: an image
// tag, which shows in a few lines of the manifest.
func valuesOnlyUpgrade(ns string, v int) *release.Release {
	ch := fixture.New(1).Chart(fixture.LargeChartOptions)
	g := fixture.New(5)
	values := g.Values(40)
	values["image"] = map[string]interface{}{"repository": "registry.example/big", "tag": fmt.Sprintf("v1.%d.0", v)}
	r := g.Release("big", ns, v, ch, values, release.StatusDeployed, 1000)
	docs := strings.Split(fixture.New(6).Manifest("big", 230000), "---\n")
	for _, i := range []int{1, 17, 42, 90} {
		if i < len(docs) {
			docs[i] += fmt.Sprintf("  image: registry.example/big:v1.%d.0\n", v)
		}
	}
	r.Manifest = strings.Join(docs, "---\n")
	return r
}

// helmBytes is what Helm's Secrets and SQL drivers store for r: its JSON,
// gzip'd at best compression, base64'd.
func helmBytes(t testing.TB, r *release.Release) int {
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

// TestDeltaBytesPerUpgrade measures the bytes stored per values-only
// upgrade (Helm's flow: create the new revision, supersede the previous),
// with and without deltas, against what Helm stores, and requires at most
// 1/30 of Helm's with deltas.
func TestDeltaBytesPerUpgrade(t *testing.T) {
	for _, d := range []struct {
		name string
		conn func(t testing.TB) string
	}{
		{"sqlite", func(t testing.TB) string { return filepath.Join(t.TempDir(), "helm.db") }},
		{"postgres", func(t testing.TB) string { testenv.PostgresServer(t); return testenv.Postgres(t) }},
		{"mysql", func(t testing.TB) string { testenv.MySQLServer(t); return testenv.MySQL(t) }},
	} {
		t.Run(d.name, func(t *testing.T) {
			if testing.Short() && d.name != "sqlite" {
				t.Skip("short")
			}
			conn := d.conn(t)
			s := openStore(t, d.name, conn)
			defer s.Close()
			const n = 10
			r1 := valuesOnlyUpgrade("x", 1)
			js, _ := json.Marshal(r1)
			helm := helmBytes(t, valuesOnlyUpgrade("x", 2))
			per := map[bool]int64{}
			for _, deltas := range []bool{false, true} {
				ns := map[bool]string{false: "full", true: "delta"}[deltas]
				engine.SetDeltas(s, deltas)
				v := s.Namespace(ns)
				if err := v.Create("sh.helm.release.v1.big.v1", valuesOnlyUpgrade(ns, 1)); err != nil {
					t.Fatal(err)
				}
				before := stored(t, v)
				for i := 2; i <= n+1; i++ {
					if err := v.Create(fmt.Sprintf("sh.helm.release.v1.big.v%d", i), valuesOnlyUpgrade(ns, i)); err != nil {
						t.Fatal(err)
					}
					prev := valuesOnlyUpgrade(ns, i-1)
					prev.Info.Status = release.StatusSuperseded
					if err := v.Update(fmt.Sprintf("sh.helm.release.v1.big.v%d", i-1), prev); err != nil {
						t.Fatal(err)
					}
				}
				after := stored(t, v)
				per[deltas] = (after.StoredBytes() - before.StoredBytes()) / n
				t.Logf("%s, deltas %v: install %d bytes stored; %d bytes per values-only upgrade (heads %d, parts %d)",
					d.name, deltas, before.StoredBytes(), per[deltas], (after.HeadBytes-before.HeadBytes)/n, (after.PartBytes-before.PartBytes)/n)
				// Every revision reads back, from a store with no caches.
				r := openStore(t, d.name, conn, driver.WithCacheBytes(0)).Namespace(ns)
				for i := 1; i <= n+1; i++ {
					if _, err := r.Get(fmt.Sprintf("sh.helm.release.v1.big.v%d", i)); err != nil {
						t.Fatal(err)
					}
				}
				r.Close()
			}
			t.Logf("%s: release JSON %d bytes, manifest %d bytes; Helm stores %d bytes per revision; helmstore %d bytes per values-only upgrade without deltas (1/%d of Helm), %d with (1/%d of Helm)",
				d.name, len(js), len(r1.Manifest), helm, per[false], int64(helm)/max(per[false], 1), per[true], int64(helm)/max(per[true], 1))
			if per[true]*30 > int64(helm) {
				t.Errorf("%d bytes per values-only upgrade, more than 1/30 of Helm's %d", per[true], helm)
			}
		})
	}
}

func stored(t *testing.T, s driver.Store) driver.Stats {
	t.Helper()
	st, err := s.Stats(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return st
}
