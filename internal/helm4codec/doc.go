// Package helm4codec converts Helm 4's releases to and from the engine's neutral form.
//
// Its chart half (chart.go) describes Helm 4's chart (helm.sh/helm/v4/pkg/chart/v2)
// to package codec's chart wire format, the one Helm 3's face writes too, and
// builds one from it: a chart written through either Helm is read by both, and
// one without mod times is stored once whichever Helm wrote it. A decoded chart
// deep-equals Helm 4's own JSON round trip of the chart, mod times included.
package helm4codec
