package helm3codec

import (
	"encoding/json"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/internal/codec"
)

// Codec converts Helm 3's releases to and from the engine's neutral form.
type Codec struct{}

// Format returns the release format Helm 3's releases are stored in.
func (Codec) Format() codec.Format { return codec.ReleaseV1 }

// Meta returns what the engine reads of rls.
func (Codec) Meta(rls *release.Release) codec.Meta {
	m := codec.Meta{Name: rls.Name, Namespace: rls.Namespace, Version: rls.Version, Labels: rls.Labels}
	if rls.Info != nil {
		m.HasInfo, m.Status, m.Description = true, rls.Info.Status.String(), rls.Info.Description
		if !rls.Info.LastDeployed.IsZero() {
			m.Updated = rls.Info.LastDeployed.Time.Format(time.RFC3339Nano)
		}
	}
	if rls.Chart != nil && rls.Chart.Metadata != nil {
		m.ChartName, m.ChartVersion, m.AppVersion = rls.Chart.Metadata.Name, rls.Chart.Metadata.Version, rls.Chart.Metadata.AppVersion
	}
	return m
}

// Identity returns rls's name, version and namespace.
func (Codec) Identity(rls *release.Release) (name string, version int, namespace string) {
	return rls.Name, rls.Version, rls.Namespace
}

// Split takes rls apart. rls is not modified. Info.Resources is not kept:
// Helm fills it only for display, and Helm's own drivers cannot read a
// release back once it is stored.
func (Codec) Split(rls *release.Release) (*codec.Split, error) {
	head := *rls
	head.Chart, head.Config, head.Manifest, head.Labels = nil, nil, "", nil
	if rls.Info != nil && rls.Info.Resources != nil {
		info := *rls.Info
		info.Resources = nil
		head.Info = &info
	}
	var chart func() ([][]byte, error)
	if rls.Chart != nil {
		chart = func() ([][]byte, error) { return encodeChart(rls.Chart) }
	}
	return codec.SplitRelease(codec.ReleaseV1, func() ([]byte, error) { return json.Marshal(&head) }, chart, rls.Config, rls.Manifest)
}

// DecodeChart decodes the canonical bytes of a chart part.
func (Codec) DecodeChart(raw []byte) (codec.ChartPart, error) { return decodeChart(raw) }

// Assemble rebuilds a release from its head's JSON (codec.OpenHead) and
// decoded parts (nil for an absent part); the chart is built on shared, a
// Share or Adopt of the chart part. The result shares no mutable memory with
// the parts but what the charts built on one shared have in common.
func (Codec) Assemble(head []byte, chart codec.ChartPart, shared any, values, manifest *codec.Decoded, labels map[string]string) (*release.Release, error) {
	rls := new(release.Release)
	if err := json.Unmarshal(head, rls); err != nil {
		return nil, fmt.Errorf("%w: head: %v", codec.ErrCorrupt, err)
	}
	if chart != nil {
		p, ok := chart.(*ChartPart)
		sh, _ := shared.(*Shared)
		if !ok {
			return nil, fmt.Errorf("%w: chart part of another Helm version's codec", codec.ErrCorrupt)
		}
		c, err := p.ChartOn(sh)
		if err != nil {
			return nil, err
		}
		rls.Chart = c
	}
	if values != nil {
		rls.Config = values.Values // the call's own copy (engine.Codec)
	}
	if manifest != nil {
		rls.Manifest = manifest.Manifest
	}
	rls.Labels = codec.CopyLabels(labels)
	return rls, nil
}

// Stub returns the release a head says is stored, for a release whose
// stored data cannot be decoded.
func (Codec) Stub(name string, version int, namespace, status string) *release.Release {
	rls := &release.Release{Name: name, Version: version, Namespace: namespace, Info: &release.Info{}}
	if status != "" {
		rls.Info.Status = release.Status(status)
	}
	return rls
}
