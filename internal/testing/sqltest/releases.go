package sqltest

import (
	"fmt"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
)

// Key returns Helm's storage key of revision v of release name.
func Key(name string, v int) string { return driver.MakeKey(name, v) }

// Release returns revision v of a small deployed release name in ns, with a
// chart of its own (so a test may change it) and values and a manifest that
// name the release and revision.
func Release(name, ns string, v int) *release.Release {
	return &release.Release{Name: name, Namespace: ns, Version: v,
		Chart:    &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "1.0.0"}, Templates: []*chart.File{{Name: "t.yaml", Data: []byte("kind: ConfigMap\n")}}},
		Config:   map[string]interface{}{"name": name, "v": float64(v)},
		Manifest: fmt.Sprintf("kind: ConfigMap # %s %d\n", name, v),
		Info:     &release.Info{Status: release.StatusDeployed}}
}

// sharedChart is the one chart every SharedRelease has.
var sharedChart = &chart.Chart{
	Metadata:  &chart.Metadata{Name: "shared", Version: "1.0.0"},
	Templates: []*chart.File{{Name: "cm.yaml", Data: []byte("kind: ConfigMap\n")}},
}

// SharedRelease returns revision 1 of release name in namespace "storm", a
// deployed release whose chart every SharedRelease shares and whose values
// and manifest are the values-th and manifest-th of their kind: releases
// drawn from small pools of each share their parts.
func SharedRelease(name string, values, manifest int) *release.Release {
	return &release.Release{Name: name, Namespace: "storm", Version: 1, Chart: sharedChart,
		Config:   map[string]interface{}{"pick": float64(values)},
		Manifest: fmt.Sprintf("kind: ConfigMap # %d\n", manifest),
		Info:     &release.Info{Status: release.StatusDeployed}}
}
