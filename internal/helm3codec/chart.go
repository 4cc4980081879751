package helm3codec

import (
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/helmstore/helmstore/internal/codec"

	"helm.sh/helm/v3/pkg/chart"
)

// The chart part's wire format is package codec's (codec.EncodeChart), the
// same for every face; this file fills it from Helm 3's chart.Chart and
// builds one from it. Helm 3 has no mod times: its charts are written
// without them (so a chart stored through Helm 3 and through Helm 4 without
// mod times is stored once), and those of a chart written through Helm 4
// are not kept, as Helm 3's JSON drops them.

// encodeChart returns the canonical bytes of c as pieces to be read in
// order (codec.EncodeChart): c's blobs are its own slices, not copied.
func encodeChart(c *chart.Chart) ([][]byte, error) {
	return codec.EncodeChart(&codec.ChartFields{
		Metadata: c.Metadata, Lock: c.Lock, Values: c.Values, Schema: c.Schema,
		Templates: codec.ChartFilesOf(c.Templates, fileOf), Files: codec.ChartFilesOf(c.Files, fileOf),
	})
}

func fileOf(f *chart.File) codec.ChartFile { return codec.ChartFile{Name: f.Name, Data: f.Data} }

// ChartPart is a decoded, immutable chart part. Chart builds a fresh
// *chart.Chart from it each time, so callers never share mutable state.
type ChartPart struct {
	c        *codec.Chart
	metadata *chart.Metadata
	lock     *chart.Lock
}

func decodeChart(raw []byte) (*ChartPart, error) {
	p := &ChartPart{}
	c, err := codec.DecodeChart(raw, &p.metadata, &p.lock)
	if err != nil {
		return nil, err
	}
	p.c = c
	return p, nil
}

// Size returns the size of the part's canonical bytes, for cache accounting.
func (p *ChartPart) Size() int { return p.c.Size() }

// Chart returns a new chart with its own copies of every field.
func (p *ChartPart) Chart() (*chart.Chart, error) { return p.ChartOn(p.c.Share()) }

// Shared is what the charts ChartOn builds from one Share have in common: a
// copy of the part's values and of its file bytes (codec.ChartShare).
type Shared = codec.ChartShare

// Share copies the part's values and file bytes for ChartOn (a *Shared).
func (p *ChartPart) Share() any { return p.c.Share() }

// Adopt is Share without copying: the Shared holds the part's own values
// and file bytes. Only for a part that nothing else holds or will build a
// chart from again (a part read for one call and not cached), so that a
// cold read does not copy a chart it is about to drop.
func (p *ChartPart) Adopt() any { return p.c.Adopt() }

// ChartOn is Chart, but the returned chart's values map and its files' bytes
// are those of sh, a Share of p: charts built on one Share share them (and
// nothing else: each has its own metadata, lock and File values). The
// engine builds the releases of one call that have one chart this way, as
// Helm's Memory driver returns shared objects; never across calls.
func (p *ChartPart) ChartOn(sh *Shared) (*chart.Chart, error) {
	if !sh.Of(p.c) {
		return nil, errors.New("chart: ChartOn with another part's Share")
	}
	return &chart.Chart{
		Metadata: cloneMetadata(p.metadata), Lock: cloneLock(p.lock), Values: sh.Values(), Schema: sh.Schema(),
		Templates: codec.BuildFiles(sh, p.c.Templates(), fill), Files: codec.BuildFiles(sh, p.c.Files(), fill),
	}, nil
}

// fill sets a built file; Helm 3's files have no mod time.
func fill(f *chart.File, name string, data []byte, _ time.Time) { f.Name, f.Data = name, data }

// Name returns the chart's name and version from its metadata, for summaries.
func (p *ChartPart) Name() (name, version string) {
	if p.metadata == nil {
		return "", ""
	}
	return p.metadata.Name, p.metadata.Version
}

// cloneMetadata deep-copies metadata decoded from JSON. (A test checks that
// every field of a reference type is copied here.)
func cloneMetadata(m *chart.Metadata) *chart.Metadata {
	if m == nil {
		return nil
	}
	c := *m
	c.Sources = slices.Clone(m.Sources)
	c.Keywords = slices.Clone(m.Keywords)
	if m.Maintainers != nil {
		c.Maintainers = make([]*chart.Maintainer, len(m.Maintainers))
		for i, x := range m.Maintainers {
			if x != nil {
				y := *x
				c.Maintainers[i] = &y
			}
		}
	}
	c.Annotations = maps.Clone(m.Annotations)
	c.Dependencies = cloneDependencies(m.Dependencies)
	return &c
}

func cloneDependencies(ds []*chart.Dependency) []*chart.Dependency {
	if ds == nil {
		return nil
	}
	out := make([]*chart.Dependency, len(ds))
	for i, d := range ds {
		if d != nil {
			c := *d
			c.Tags = slices.Clone(d.Tags)
			c.ImportValues, _ = codec.CloneValue(d.ImportValues).([]interface{})
			out[i] = &c
		}
	}
	return out
}

func cloneLock(l *chart.Lock) *chart.Lock {
	if l == nil {
		return nil
	}
	c := *l
	c.Dependencies = cloneDependencies(l.Dependencies)
	return &c
}
