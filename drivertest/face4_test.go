package drivertest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	common4 "helm.sh/helm/v4/pkg/chart/common"
	chart4 "helm.sh/helm/v4/pkg/chart/v2"
	rspb4 "helm.sh/helm/v4/pkg/release/v1"
	helmdriver4 "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// TestHelm4ConversionKeepsEveryField checks that the Helm 4 run's release
// conversion (convert4.go) knows every field of both Helms' types: each
// Helm 3 field is a Helm 4 field, and Helm 4's others are the ones the
// conversion leaves zero. A field a later Helm adds fails here, not silently
// in the tables.
func TestHelm4ConversionKeepsEveryField(t *testing.T) {
	for _, c := range []struct {
		v3, v4 any
		only4  []string
	}{
		{release.Release{}, rspb4.Release{}, []string{"ApplyMethod"}},
		{release.Info{}, rspb4.Info{}, []string{"RollbackRevision"}},
		{release.Hook{}, rspb4.Hook{}, nil},
		{release.HookExecution{}, rspb4.HookExecution{}, nil},
		{chart.Chart{}, chart4.Chart{}, []string{"ModTime", "SchemaModTime"}},
		{chart.File{}, common4.File{}, []string{"ModTime"}},
		{chart.Metadata{}, chart4.Metadata{}, nil},
		{chart.Lock{}, chart4.Lock{}, nil},
		{chart.Maintainer{}, chart4.Maintainer{}, nil},
		{chart.Dependency{}, chart4.Dependency{}, nil},
	} {
		t3, t4 := reflect.TypeOf(c.v3), reflect.TypeOf(c.v4)
		names := func(t reflect.Type) map[string]bool {
			m := map[string]bool{}
			for i := range t.NumField() {
				m[t.Field(i).Name] = true
			}
			return m
		}
		n3, n4 := names(t3), names(t4)
		for n := range n3 {
			if !n4[n] {
				t.Errorf("%v has field %s, %v has not", t3, n, t4)
			}
			delete(n4, n)
		}
		for _, n := range c.only4 {
			delete(n4, n)
		}
		for n := range n4 {
			t.Errorf("%v has field %s the conversion does not know", t4, n)
		}
	}
}

// TestHelm4ConversionRoundTrip checks that a release with every Helm 3
// field set, a subchart and a lock included, comes back from Helm 4's types
// deep-equal, sharing its bytes and values rather than copying them.
func TestHelm4ConversionRoundTrip(t *testing.T) {
	g := fixture.New(7)
	ch := g.Chart(fixture.SmallChartOptions)
	ch.Raw = []*chart.File{{Name: "Chart.yaml", Data: []byte("name: small")}}
	ch.Schema = []byte(`{"type":"object"}`)
	ch.Files = []*chart.File{{Name: "README.md", Data: []byte("read me")}, nil}
	ch.Lock = &chart.Lock{Generated: time.Unix(1700000000, 0).UTC(), Digest: "sha256:x", Dependencies: ch.Metadata.Dependencies}
	sub := g.Chart(fixture.ChartOptions{Name: "sub", Version: "0.1.0", Templates: 1, TemplateSize: 100, ValueKeys: 1})
	ch.SetDependencies(sub)
	r := g.Release("app", "team-a", 3, ch, g.Values(4), release.StatusDeployed, 2000)
	r.Labels = map[string]string{"team": "a"}
	r.Info.Deleted = r.Info.LastDeployed
	r.Info.Resources = nil
	r.Hooks[0].OutputLogPolicies = []release.HookOutputLogPolicy{release.HookOutputOnFailed}

	r4 := toHelm4(r)
	back := toHelm3(r4)
	if !reflect.DeepEqual(back, r) {
		t.Fatalf("the release changed crossing to Helm 4 and back:\n got %s\nwant %s", brief(back), brief(r))
	}
	if len(back.Chart.Dependencies()) != 1 || back.Chart.Dependencies()[0].Parent() != back.Chart {
		t.Fatalf("the subchart came back as %v", back.Chart.Dependencies())
	}
	if &r4.Chart.Templates[0].Data[0] != &r.Chart.Templates[0].Data[0] || reflect.ValueOf(r4.Config).Pointer() != reflect.ValueOf(r.Config).Pointer() {
		t.Fatal("the conversion copied a template's bytes or the values; want them shared")
	}
	if toHelm4(nil) != nil || toHelm3(nil) != nil || releaser4(nil) != nil {
		t.Fatal("a nil release did not convert to nil")
	}
}

// TestHelm4Errors checks the sentinel mapping of the Helm 4 run (err3): a
// Helm 4 sentinel, bare or wrapped, matches Helm 3's and keeps what it
// wraps; package driver's sentinel alone, or Helm 3's, matches no Helm 3
// sentinel, so that a Helm 4 face returning either fails the tables.
func TestHelm4Errors(t *testing.T) {
	if err3(helmdriver4.ErrReleaseNotFound) != helmdriver.ErrReleaseNotFound {
		t.Fatal("a bare Helm 4 ErrReleaseNotFound is not Helm 3's bare value")
	}
	wrapped := &driver.ReleaseError{Op: "get", Key: "k", Err: errors.Join(helmdriver4.ErrReleaseExists, driver.ErrReleaseExists)}
	got := err3(wrapped)
	var re *driver.ReleaseError
	if !errors.Is(got, helmdriver.ErrReleaseExists) || !errors.Is(got, driver.ErrReleaseExists) || !errors.As(got, &re) || re != wrapped || got.Error() != wrapped.Error() {
		t.Fatalf("err3(%v) = %v; want it to match Helm 3's ErrReleaseExists and keep the ReleaseError and its text", wrapped, got)
	}
	for _, err := range []error{
		&driver.ReleaseError{Op: "get", Key: "k", Err: driver.ErrReleaseNotFound},
		&driver.ReleaseError{Op: "get", Key: "k", Err: helmdriver.ErrReleaseNotFound},
		helmdriver.ErrInvalidKey,
	} {
		got := err3(err)
		for _, s := range []error{helmdriver.ErrReleaseNotFound, helmdriver.ErrReleaseExists, helmdriver.ErrInvalidKey} {
			if errors.Is(got, s) {
				t.Errorf("err3(%v) = %v matches Helm 3's %v; want no Helm 3 sentinel without Helm 4's", err, got, s)
			}
		}
	}
	if err3(driver.ErrCorrupt) != driver.ErrCorrupt || err3(nil) != nil {
		t.Fatal("err3 changed an error with no sentinel of Helm's")
	}
}
