package crsplit

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/caswire"
	"github.com/helmstore/helmstore/internal/codec"
	"github.com/helmstore/helmstore/internal/helm3codec"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// helmJSON is what Helm's own drivers return for r: its JSON round trip,
// with only custom labels.
func helmJSON(t testing.TB, r *release.Release) *release.Release {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out := new(release.Release)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	out.Labels = map[string]string{}
	for k, v := range r.Labels {
		if !driver.IsSystemLabel(k) {
			out.Labels[k] = v
		}
	}
	return out
}

func sameAsHelm(t testing.TB, what string, got, want *release.Release) {
	t.Helper()
	g, w := helmJSON(t, got), helmJSON(t, want)
	if !reflect.DeepEqual(g, w) {
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		t.Fatalf("%s: release differs from Helm's round trip\n got %.400s\nwant %.400s", what, gb, wb)
	}
}

func key(name string, v int) string { return driver.MakeKey(name, v) }

// objectNames returns name -> resourceVersion of every object of res in ns.
func objectNames(t testing.TB, b *kubeBackend, res, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, raw := range rawObjects(t, b, res, ns) {
		m := meta(t, raw)
		out[m.Name] = m.ResourceVersion
	}
	return out
}

// TestValuesOnlyUpgradeReusesChart checks the object-level promise: an
// upgrade that changes only values creates one Release and one Values
// object, and the Chart (with its chunks) is referenced, not written again.
func TestValuesOnlyUpgradeReusesChart(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	r1 := fixture.LargeRelease("big", ns, 1)
	if err := s.Create(key("big", 1), r1); err != nil {
		t.Fatal(err)
	}
	before := map[string]map[string]string{}
	for _, res := range allResources {
		before[res] = objectNames(t, b, res, ns)
	}
	if len(before[resCharts]) != 1 || len(before[resChunks]) == 0 {
		t.Fatalf("a 2 MB release should have one Chart object with chunks: %d charts, %d chunks", len(before[resCharts]), len(before[resChunks]))
	}

	r2 := fixture.LargeRelease("big", ns, 2)
	r2.Manifest = r1.Manifest // only the values change
	if err := s.Create(key("big", 2), r2); err != nil {
		t.Fatal(err)
	}
	after := map[string]map[string]string{}
	for _, res := range allResources {
		after[res] = objectNames(t, b, res, ns)
	}
	newObjects := map[string][]string{}
	for res, names := range after {
		for n := range names {
			if _, ok := before[res][n]; !ok {
				newObjects[res] = append(newObjects[res], n)
			}
		}
	}
	if len(newObjects) != 2 || len(newObjects[resReleases]) != 1 || len(newObjects[resValues]) != 1 {
		t.Fatalf("a values-only upgrade created %v; want one Release and one Values object", newObjects)
	}
	for n, rv := range before[resChunks] {
		if after[resChunks][n] != rv {
			t.Fatalf("chunk %s was rewritten by a values-only upgrade", n)
		}
	}
	// The chart is owned by both revisions.
	var chart partObject
	raw, err := b.c.get(ctxT(t), resCharts, ns, codecDigest(t, r1, driver.KindChart))
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(raw, &chart)
	var owners []string
	for _, o := range chart.OwnerReferences {
		owners = append(owners, o.Kind+"/"+o.Name)
	}
	if strings.Join(owners, " ") != "Release/"+key("big", 1)+" Release/"+key("big", 2) {
		t.Fatalf("chart owners %v, want both revisions", owners)
	}
	for v, want := range map[int]*release.Release{1: r1, 2: r2} {
		got, err := s.Get(key("big", v))
		if err != nil {
			t.Fatal(err)
		}
		sameAsHelm(t, "get", got, want)
	}
}

func codecDigest(t testing.TB, r *release.Release, k driver.Kind) string {
	t.Helper()
	s, err := helm3codec.Codec{}.Split(r)
	if err != nil {
		t.Fatal(err)
	}
	return s.Digest(k).String()
}

// TestReleaseObject checks what kubectl sees: labels, spec (with the
// record's description and last deployment time), the compressed record.
func TestReleaseObject(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	r := fixture.LargeRelease("web", ns, 3)
	r.Labels = map[string]string{"team": "a", "example.com/tier": "frontend"}
	if err := s.Create(key("web", 3), r); err != nil {
		t.Fatal(err)
	}
	b.WaitCommits()
	raw, err := b.c.get(ctxT(t), resReleases, ns, key("web", 3))
	if err != nil {
		t.Fatal(err)
	}
	obj, err := decodeRelease(raw)
	if err != nil {
		t.Fatal(err)
	}
	wantLabels := map[string]string{"name": "web", "owner": "helm", "status": "deployed", "version": "3", "team": "a", "example.com/tier": "frontend"}
	for k, v := range wantLabels {
		if obj.Labels[k] != v {
			t.Fatalf("label %s=%q, want %q (labels %v)", k, obj.Labels[k], v, obj.Labels)
		}
	}
	if obj.Labels["createdAt"] == "" || obj.Labels[caswire.LabelPending] != "" {
		t.Fatalf("labels %v: want createdAt and no pending label", obj.Labels)
	}
	if obj.Spec.Chart != "big-stack-58.2.1" || obj.Spec.AppVersion != "v0.58.2.1" || obj.Spec.Status != "deployed" || obj.Spec.Version != 3 {
		t.Fatalf("spec summary %+v", obj.Spec)
	}
	var record struct {
		Info  struct{ Status, Description string }
		Hooks []struct{ Name string }
	}
	inner, err := codec.Decompress(obj.Spec.Record)
	if err != nil {
		t.Fatal(err)
	}
	rec, err := codec.CheckFormat(inner, codec.ReleaseV1)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(rec, &record); err != nil {
		t.Fatal(err)
	}
	if record.Info.Status != "deployed" || len(record.Hooks) != 2 {
		t.Fatalf("release record %+v", record)
	}
	if obj.Spec.Description != record.Info.Description || obj.Spec.Description == "" || obj.Spec.Updated == "" {
		t.Fatalf("spec description %q, updated %q: want the record's (%q)", obj.Spec.Description, obj.Spec.Updated, record.Info.Description)
	}
	if len(obj.Spec.Release) != 0 {
		t.Fatal("the record is also stored as a structured object")
	}
	if !obj.Spec.HasSummary {
		t.Fatal("spec.hasSummary is not set: listings would read the release whole")
	}
	// No field manager's record is kept: created and committed (replaced)
	// whole, the Release has none; nor has the chart, created incomplete
	// and patched complete.
	if len(obj.ManagedFields) != 0 {
		t.Fatalf("the Release keeps managedFields %+v", obj.ManagedFields)
	}
	// A second release of the chart adds itself as referrer by a JSON
	// patch, which keeps none either.
	if err := s.Create(key("api", 1), fixture.LargeRelease("api", ns, 1)); err != nil {
		t.Fatal(err)
	}
	for _, raw := range rawObjects(t, b, resCharts, ns) {
		if p, err := decodePart(raw); err != nil || len(p.ManagedFields) != 0 || len(p.OwnerReferences) != 2 {
			t.Fatalf("the chart keeps managedFields %+v, owners %v (%v)", p.ManagedFields, p.OwnerReferences, err)
		}
	}
	// Custom labels in the reserved prefix are refused with a clear error.
	r2 := fixture.LargeRelease("web", ns, 4)
	r2.Labels = map[string]string{"helmstore.io/pending": "x"}
	err = s.Create(key("web", 4), r2)
	if err == nil || !strings.Contains(err.Error(), "reserved") || !strings.Contains(err.Error(), key("web", 4)) {
		t.Fatalf("reserved label: %v", err)
	}
}

// TestLongNames covers a release name too long for a label value and a key
// too long for an object name.
func TestLongNames(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	for _, name := range []string{strings.Repeat("a", 70), strings.Join([]string{strings.Repeat("b", 60), strings.Repeat("c", 63), strings.Repeat("d", 63), strings.Repeat("e", 60)}, ".")} {
		r := fixture.New(3).Release(name, ns, 1, fixture.New(1).Chart(fixture.SmallChartOptions), map[string]interface{}{"x": "y"}, release.StatusDeployed, 100)
		if err := s.Create(key(name, 1), r); err != nil {
			t.Fatalf("name of %d characters: %v", len(name), err)
		}
		got, err := s.Get(key(name, 1))
		if err != nil {
			t.Fatal(err)
		}
		sameAsHelm(t, "long name", got, r)
		// Query takes label values (at most 63 characters), so a long
		// name is found by List.
		rs, err := s.List(func(r *release.Release) bool { return r.Name == name })
		if err != nil || len(rs) != 1 || rs[0].Labels["name"] != name {
			t.Fatalf("list by a %d-character name: %d, %v", len(name), len(rs), err)
		}
		if _, err := s.Delete(key(name, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, b, resReleases, ns) + count(t, b, resCharts, ns); n != 0 {
		t.Fatalf("%d objects left", n)
	}
	if _, err := s.Get(key(strings.Repeat("a", 70), 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("get after delete: %v", err)
	}
}

// TestDamagedReleaseObject: a Release object edited into nonsense (here,
// one whose spec.key does not match its name) is an error naming it when
// asked for, and is skipped, with a log line, by lists.
func TestDamagedReleaseObject(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	var logged []string
	s, b := openAs(t, k, kubeenv.Admin, ns, helm3.WithLog(func(f string, v ...interface{}) { logged = append(logged, fmt.Sprintf(f, v...)) }))
	good := smallRelease("good", ns, 1, "c")
	if err := s.Create(key("good", 1), good); err != nil {
		t.Fatal(err)
	}
	bad := &releaseObject{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiVersion, Kind: "Release"},
		ObjectMeta: metav1.ObjectMeta{Name: key("bad", 1), Namespace: ns, Labels: map[string]string{"owner": "helm", "name": "bad"}},
		Spec:       releaseSpec{HeadFields: cas.HeadFields{Key: key("other", 1), Name: "bad", Version: 1, Status: "deployed", Owner: "helm"}},
	}
	if _, err := b.c.create(ctxT(t), resReleases, ns, bad.Name, bad); err != nil {
		t.Fatal(err)
	}
	_, err := s.Get(key("bad", 1))
	if !errors.Is(err, driver.ErrCorrupt) || errors.Is(err, helm3.ErrReleaseNotFound) || !strings.Contains(err.Error(), key("bad", 1)) {
		t.Fatalf("get of a damaged release: %v", err)
	}
	rs, err := s.List(func(*release.Release) bool { return true })
	if err != nil || len(rs) != 1 || rs[0].Name != "good" {
		t.Fatalf("list with a damaged release: %d, %v", len(rs), err)
	}
	if len(logged) == 0 || !strings.Contains(strings.Join(logged, "\n"), key("bad", 1)) {
		t.Fatalf("the skipped release was not logged: %q", logged)
	}
}
