package redis_test

import (
	"errors"
	"fmt"
	"sort"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
)

// smallRelease returns revision v of a small release: a chart shared by
// every revision, values and manifest that change with v.
func smallRelease(name, ns string, v int, status release.Status) *release.Release {
	t := helmtime.Unix(1700000000+int64(v), 0).UTC()
	return &release.Release{
		Name: name, Namespace: ns, Version: v,
		Chart: &chart.Chart{
			Metadata:  &chart.Metadata{Name: "demo", Version: "0.1.0", APIVersion: chart.APIVersionV2},
			Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("kind: ConfigMap\n")}},
			Values:    map[string]interface{}{"greeting": "hello"},
		},
		Config:   map[string]interface{}{"revision": float64(v), "name": name},
		Manifest: fmt.Sprintf("kind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  v: %q\n", name, fmt.Sprint(v)),
		Info:     &release.Info{FirstDeployed: t, LastDeployed: t, Status: status, Description: fmt.Sprintf("revision %d", v)},
	}
}

// upgrade does what Helm's upgrade does to storage: create revision v
// deployed, then mark revision v-1 superseded.
func upgrade(s helm3.Store, ns, name string, v int) error {
	if err := s.Create(driver.MakeKey(name, v), smallRelease(name, ns, v, release.StatusDeployed)); err != nil {
		return fmt.Errorf("create revision %d of %s/%s: %w", v, ns, name, err)
	}
	if v > 1 {
		if err := s.Update(driver.MakeKey(name, v-1), smallRelease(name, ns, v-1, release.StatusSuperseded)); err != nil {
			return fmt.Errorf("supersede revision %d of %s/%s: %w", v-1, ns, name, err)
		}
	}
	return nil
}

// history checks the revisions of name in s: versions 1..n, each whole, the
// last deployed and the others superseded. It returns n.
func history(t testing.TB, s helm3.Store, ns, name string) int {
	t.Helper()
	rs, err := s.Query(map[string]string{"name": name, "owner": "helm"})
	if err != nil {
		if errors.Is(err, helm3.ErrReleaseNotFound) {
			return 0
		}
		t.Fatalf("history of %s/%s: %v", ns, name, err)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].Version < rs[j].Version })
	for i, r := range rs {
		if r.Version != i+1 {
			t.Fatalf("history of %s/%s: revision %d at position %d", ns, name, r.Version, i)
		}
		want := release.StatusSuperseded
		if i == len(rs)-1 {
			want = release.StatusDeployed
		}
		if r.Info.Status != want {
			t.Fatalf("history of %s/%s: revision %d is %s, want %s", ns, name, r.Version, r.Info.Status, want)
		}
		got := r.Config["revision"]
		if got != float64(r.Version) || r.Chart == nil || r.Manifest != smallRelease(name, ns, r.Version, want).Manifest {
			t.Fatalf("history of %s/%s: revision %d is not whole (values %v)", ns, name, r.Version, r.Config)
		}
	}
	return len(rs)
}
