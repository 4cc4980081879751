package drivertest

import (
	"runtime"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/internal/testing/releasecheck"
)

// recorder is a testing.TB whose Fatalf records the failure and ends the
// goroutine, so a test can check that a comparison fails.
type recorder struct {
	testing.TB
	failed string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...interface{}) {
	r.failed = format
	runtime.Goexit()
}

// fails reports whether check fails the recorder it is given.
func fails(t *testing.T, check func(tb testing.TB)) bool {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check(r)
	}()
	<-done
	return r.failed != ""
}

// TestCompareCatchesDifferences checks that the suite's release comparisons
// fail on every kind of difference Normalize-and-DeepEqual caught, and pass
// on what a JSON round trip does not change.
func TestCompareCatchesDifferences(t *testing.T) {
	t.Parallel()
	base := func() *release.Release {
		r := rel("app", "default", 1, release.StatusDeployed)
		r.Labels = map[string]string{"team": "a"}
		return r
	}
	roundTripped := releasecheck.Normalize(t, base())
	roundTripped.Labels = map[string]string{"team": "a"}
	if fails(t, func(tb testing.TB) { sameRelease(tb, "same", roundTripped, base()) }) {
		t.Fatal("sameRelease fails a release equal to what was written after a JSON round trip")
	}
	nilLabels := base()
	nilLabels.Labels = nil
	if fails(t, func(tb testing.TB) {
		sameRelease(tb, "no labels", nilLabels, func() *release.Release { r := base(); r.Labels = nil; return r }())
	}) {
		t.Fatal("sameRelease fails nil labels against no custom labels")
	}
	for name, change := range map[string]func(r *release.Release){
		"chart file byte":      func(r *release.Release) { r.Chart.Templates[0].Data[3] ^= 1 },
		"chart file data nil":  func(r *release.Release) { r.Chart.Templates[0].Data = nil },
		"chart file missing":   func(r *release.Release) { r.Chart.Templates = r.Chart.Templates[:0] },
		"chart file name":      func(r *release.Release) { r.Chart.Templates[0].Name += "x" },
		"chart file added":     func(r *release.Release) { r.Chart.Files = []*chart.File{{Name: "README.md", Data: []byte("#")}} },
		"chart file empty":     func(r *release.Release) { r.Chart.Templates[0].Data = []byte{} },
		"chart values":         func(r *release.Release) { r.Chart.Values["greeting"] = "hi" },
		"chart version":        func(r *release.Release) { r.Chart.Metadata.Version = "0.1.1" },
		"no chart":             func(r *release.Release) { r.Chart = nil },
		"config":               func(r *release.Release) { r.Config["greeting"] = "v2" },
		"config nil":           func(r *release.Release) { r.Config = nil },
		"manifest last byte":   func(r *release.Release) { r.Manifest = r.Manifest[:len(r.Manifest)-1] + "!" },
		"status":               func(r *release.Release) { r.Info.Status = release.StatusSuperseded },
		"description":          func(r *release.Release) { r.Info.Description += "." },
		"last deployed":        func(r *release.Release) { r.Info.LastDeployed = r.Info.LastDeployed.Add(1) },
		"version":              func(r *release.Release) { r.Version = 2 },
		"namespace":            func(r *release.Release) { r.Namespace = "other" },
		"hooks":                func(r *release.Release) { r.Hooks = []*release.Hook{{Name: "h"}} },
		"custom label value":   func(r *release.Release) { r.Labels["team"] = "b" },
		"custom label dropped": func(r *release.Release) { delete(r.Labels, "team") },
		"custom label added":   func(r *release.Release) { r.Labels["env"] = "prod" },
		"system label on Get":  func(r *release.Release) { r.Labels["owner"] = "helm" },
	} {
		got := base()
		change(got)
		if !fails(t, func(tb testing.TB) { sameRelease(tb, name, got, base()) }) {
			t.Errorf("sameRelease passes a release whose %s differs", name)
		}
		if name == "system label on Get" {
			if fails(t, func(tb testing.TB) { sameCustom(tb, name, got, base()) }) {
				t.Errorf("sameCustom fails a release from a query, with system labels")
			}
			continue
		}
		if !fails(t, func(tb testing.TB) { sameCustom(tb, name, got, base()) }) {
			t.Errorf("sameCustom passes a release whose %s differs", name)
		}
		if a, b := canon(t, []*release.Release{got}), canon(t, []*release.Release{base()}); a[0] == b[0] {
			t.Errorf("canon renders alike two releases whose %s differs", name)
		} else if d := lineDiff(a, b); !strings.Contains(d, "only got") || !strings.Contains(d, "only want") {
			t.Errorf("lineDiff does not show both sides: %s", d)
		}
	}
	// Data nil and Data empty encode differently (null and ""), and are
	// told apart after a JSON round trip.
	nilData, emptyData := base(), base()
	nilData.Chart.Templates[0].Data, emptyData.Chart.Templates[0].Data = nil, []byte{}
	if !fails(t, func(tb testing.TB) { sameRelease(tb, "nil data", nilData, emptyData) }) {
		t.Error("sameRelease passes a chart file with nil data for one with empty data")
	}
	if fails(t, func(tb testing.TB) { sameRelease(tb, "nil data", releasecheck.Normalize(tb, nilData), nilData) }) {
		t.Error("sameRelease fails a chart file with nil data after a JSON round trip")
	}
	if !fails(t, func(tb testing.TB) { sameRelease(tb, "nil", nil, base()) }) {
		t.Error("sameRelease passes a nil release")
	}
	if fails(t, func(tb testing.TB) { sameRelease(tb, "nil", nil, nil) }) {
		t.Error("sameRelease fails two nil releases")
	}
}
