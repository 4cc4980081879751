package drivertest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"
)

// key returns Helm's storage key for a release.
func key(name string, version int) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, version)
}

// testChart returns a small chart whose only template renders a ConfigMap
// from .Values, so Helm actions render real manifests.
func testChart(name, version string) *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{Name: name, Version: version, AppVersion: "1." + version, APIVersion: chart.APIVersionV2},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cm
data:
  greeting: {{ .Values.greeting | quote }}
  revision: {{ .Release.Revision | quote }}
`)}},
		Values: map[string]interface{}{"greeting": "hello", "nested": map[string]interface{}{"list": []interface{}{1, "two"}}},
	}
}

// rel builds a small release.
func rel(name, ns string, version int, status release.Status) *release.Release {
	t := helmtime.Unix(1700000000+int64(version), 0).UTC()
	return &release.Release{
		Name: name, Namespace: ns, Version: version,
		Chart:    testChart("demo", "0.1.0"),
		Config:   map[string]interface{}{"greeting": fmt.Sprintf("v%d", version)},
		Manifest: fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  v: %q\n", name, fmt.Sprint(version)),
		Info:     &release.Info{FirstDeployed: t, LastDeployed: t, Status: status, Description: "test release"},
	}
}

// brief is a short JSON rendering of a release for failure messages.
func brief(r *release.Release) string {
	if r == nil {
		return "<nil>"
	}
	c := *r
	c.Chart = nil
	b, _ := json.Marshal(&c)
	s := string(b)
	if len(s) > 600 {
		s = s[:600] + "..."
	}
	return fmt.Sprintf("%s labels=%v chart=%v", s, r.Labels, r.Chart != nil)
}

// keysOf returns "ns/key" of each release, sorted.
func keysOf(rs []*release.Release) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Namespace + "/" + key(r.Name, r.Version)
	}
	sort.Strings(out)
	return out
}

func joinKeys(rs []*release.Release) string { return strings.Join(keysOf(rs), " ") }

// customOnly returns labels without system labels.
func customOnly(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		if !isSystemLabel(k) {
			out[k] = v
		}
	}
	return out
}
