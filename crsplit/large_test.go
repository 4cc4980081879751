package crsplit

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// checkObjectSizes reads back every helmstore object in ns, one by one, and
// fails if any is over MaxObjectBytes. It returns the number of objects per
// resource and the largest size seen.
func checkObjectSizes(t *testing.T, b *kubeBackend, ns string) (map[string]int, int) {
	t.Helper()
	counts := map[string]int{}
	largest := 0
	for _, res := range allResources {
		for name := range objectNames(t, b, res, ns) {
			raw, err := b.c.get(ctxT(t), res, ns, name)
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) > MaxObjectBytes {
				t.Fatalf("%s %s is %d bytes serialized, over the %d limit", res, name, len(raw), MaxObjectBytes)
			}
			counts[res]++
			largest = max(largest, len(raw))
		}
	}
	return counts, largest
}

// TestLargeRelease stores a release of more than 16 MiB of JSON, which
// Helm's Secrets driver cannot, and a chart of incompressible data: install,
// upgrade, read, delete, with no object over 900 KiB.
func TestLargeRelease(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	r1, _ := fixture.SizedRelease("huge", ns, 1, 16<<20)
	js, _ := json.Marshal(r1)
	if len(js) < 16<<20 {
		t.Fatalf("release JSON is only %d bytes", len(js))
	}

	// Helm's own Secrets driver, on the same API server, fails.
	secrets := helmdriver.NewSecrets(kubeClient(t, k, kubeenv.Admin).CoreV1().Secrets(ns))
	err := secrets.Create(key("huge", 1), r1)
	if err == nil {
		t.Fatal("Helm's Secrets driver stored a 16 MiB release: the test does not show what it claims")
	}
	t.Logf("Helm's Secrets driver on the %.1f MiB release: %.300v", float64(len(js))/(1<<20), err)
	if n, _ := kubeClient(t, k, kubeenv.Admin).CoreV1().Secrets(ns).List(ctxT(t), metav1.ListOptions{}); len(n.Items) != 0 {
		t.Fatal("the Secrets driver left a secret")
	}

	// Install, upgrade (same chart, new values), read the history.
	st := storage.Init(s)
	if err := st.Create(r1); err != nil {
		t.Fatal(err)
	}
	r2, _ := fixture.SizedRelease("huge", ns, 2, 16<<20)
	r2.Config = map[string]interface{}{"upgraded": true}
	if err := st.Create(r2); err != nil {
		t.Fatal(err)
	}
	r1.Info.Status = release.StatusSuperseded
	if err := st.Update(r1); err != nil {
		t.Fatal(err)
	}
	hist, err := st.History("huge")
	if err != nil || len(hist) != 2 {
		t.Fatalf("history: %d, %v", len(hist), err)
	}
	for _, h := range hist {
		want := map[int]*release.Release{1: r1, 2: r2}[h.Version]
		sameAsHelm(t, "history", h, want)
	}

	// A chart that does not compress: its frame is as large as it is.
	noise := make([]byte, 6<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range noise {
		noise[i] = byte(rng.Uint32())
	}
	rn := smallRelease("noise", ns, 1, "noise")
	rn.Chart.Files = append(rn.Chart.Files, &chart.File{Name: "files/blob.bin", Data: noise})
	if err := s.Create(key("noise", 1), rn); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(key("noise", 1))
	if err != nil {
		t.Fatal(err)
	}
	sameAsHelm(t, "incompressible chart", got, rn)

	counts, largest := checkObjectSizes(t, b, ns)
	t.Logf("objects: %v; largest %d bytes", counts, largest)
	if counts[resChunks] < 11 || counts[resCharts] != 2 || counts[resReleases] != 3 {
		t.Fatalf("objects %v: want two charts (one shared by both revisions) in at least 11 chunks, three releases", counts)
	}

	for _, k := range []string{key("huge", 1), key("huge", 2), key("noise", 1)} {
		if _, err := s.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	assertNoObjects(t, b, ns, "left after deleting every release")
}

// TestLargeReleaseRecord stores a release whose record (hooks) is too large
// for its Release object: the record goes to chunks, read back, replaced on
// update, deleted with the release.
func TestLargeReleaseRecord(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	withHooks := func(v int, size int) *release.Release {
		r := smallRelease("hooked", ns, v, "c")
		g := fixture.New(uint64(v))
		for i := 0; i < 4; i++ {
			r.Hooks = append(r.Hooks, &release.Hook{Name: "big-hook", Kind: "Job", Path: "hooks/job.yaml", Manifest: g.Manifest("hook", size/4)})
		}
		return r
	}
	r := withHooks(1, 3<<20)
	if err := s.Create(key("hooked", 1), r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(key("hooked", 1))
	if err != nil {
		t.Fatal(err)
	}
	sameAsHelm(t, "release with 3 MiB of hooks", got, r)
	before := objectNames(t, b, resChunks, ns)
	if len(before) == 0 {
		t.Fatal("the release record was not chunked")
	}
	// An update replaces the chunks.
	u := withHooks(1, 2<<20)
	u.Info.Status = release.StatusSuperseded
	if err := s.Update(key("hooked", 1), u); err != nil {
		t.Fatal(err)
	}
	after := objectNames(t, b, resChunks, ns)
	for n := range before {
		if _, ok := after[n]; ok {
			t.Fatalf("chunk %s of the replaced record is still there", n)
		}
	}
	got, err = s.Get(key("hooked", 1))
	if err != nil {
		t.Fatal(err)
	}
	sameAsHelm(t, "updated release with large hooks", got, u)
	// An update to a small record drops the chunks.
	small := smallRelease("hooked", ns, 1, "c")
	if err := s.Update(key("hooked", 1), small); err != nil {
		t.Fatal(err)
	}
	if n := count(t, b, resChunks, ns); n != 0 {
		t.Fatalf("%d chunks left after the record shrank", n)
	}
	if err := s.Update(key("hooked", 1), u); err != nil {
		t.Fatal(err)
	}
	checkObjectSizes(t, b, ns)
	if rs, err := s.Query(map[string]string{"name": "hooked", "status": "superseded"}); err != nil || len(rs) != 1 {
		t.Fatalf("query: %d, %v", len(rs), err)
	} else {
		sameAsHelm(t, "queried", rs[0], u)
	}
	del, err := s.Delete(key("hooked", 1))
	if err != nil {
		t.Fatal(err)
	}
	sameAsHelm(t, "deleted", del, u)
	if n := count(t, b, resChunks, ns); n != 0 {
		t.Fatalf("%d chunks left after delete", n)
	}
	if _, err := s.Get(key("hooked", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatal(err)
	}
}
