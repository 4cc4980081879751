package helm4codec

import (
	"errors"
	"maps"
	"slices"
	"time"

	"helm.sh/helm/v4/pkg/chart/common"
	chartv2 "helm.sh/helm/v4/pkg/chart/v2"

	"github.com/helmstore/helmstore/internal/codec"
)

// The chart part's wire format is package codec's (codec.EncodeChart), the
// same for every face; this file fills it from Helm 4's chart and builds one
// from it, mod times included: a chart with none is written as Helm 3's face
// writes it, so the two store it once.

// encodeChart returns the canonical bytes of c as pieces to be read in
// order (codec.EncodeChart): c's blobs are its own slices, not copied.
func encodeChart(c *chartv2.Chart) ([][]byte, error) {
	return codec.EncodeChart(&codec.ChartFields{
		Metadata: c.Metadata, Lock: c.Lock, Values: c.Values, Schema: c.Schema,
		ModTime: omitZero(c.ModTime), SchemaModTime: c.SchemaModTime,
		Templates: codec.ChartFilesOf(c.Templates, fileOf), Files: codec.ChartFilesOf(c.Files, fileOf),
	})
}

func fileOf(f *common.File) codec.ChartFile {
	return codec.ChartFile{Name: f.Name, Data: f.Data, ModTime: omitZero(f.ModTime)}
}

// omitZero is t as a time field tagged omitzero in Helm's JSON (Chart.ModTime,
// File.ModTime) reads back: the zero time for any t that IsZero, whatever its
// location. SchemaModTime is always written, so it is kept as it is.
func omitZero(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t
}

// ChartPart is a decoded, immutable chart part. Chart builds a fresh
// *chartv2.Chart from it each time, so callers never share mutable state.
type ChartPart struct {
	c        *codec.Chart
	metadata *chartv2.Metadata
	lock     *chartv2.Lock
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
func (p *ChartPart) Chart() (*chartv2.Chart, error) { return p.ChartOn(p.c.Share()) }

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
func (p *ChartPart) ChartOn(sh *Shared) (*chartv2.Chart, error) {
	if !sh.Of(p.c) {
		return nil, errors.New("chart: ChartOn with another part's Share")
	}
	return &chartv2.Chart{
		Metadata: cloneMetadata(p.metadata), Lock: cloneLock(p.lock), Values: sh.Values(),
		Schema: sh.Schema(), SchemaModTime: p.c.SchemaModTime(), ModTime: p.c.ModTime(),
		Templates: codec.BuildFiles(sh, p.c.Templates(), fill), Files: codec.BuildFiles(sh, p.c.Files(), fill),
	}, nil
}

func fill(f *common.File, name string, data []byte, modTime time.Time) {
	*f = common.File{Name: name, Data: data, ModTime: modTime}
}

// Name returns the chart's name and version from its metadata, for summaries.
func (p *ChartPart) Name() (name, version string) {
	if p.metadata == nil {
		return "", ""
	}
	return p.metadata.Name, p.metadata.Version
}

// cloneMetadata deep-copies metadata decoded from JSON. (A test checks that
// every field of a reference type is copied here.)
func cloneMetadata(m *chartv2.Metadata) *chartv2.Metadata {
	if m == nil {
		return nil
	}
	c := *m
	c.Sources = slices.Clone(m.Sources)
	c.Keywords = slices.Clone(m.Keywords)
	if m.Maintainers != nil {
		c.Maintainers = make([]*chartv2.Maintainer, len(m.Maintainers))
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

func cloneDependencies(ds []*chartv2.Dependency) []*chartv2.Dependency {
	if ds == nil {
		return nil
	}
	out := make([]*chartv2.Dependency, len(ds))
	for i, d := range ds {
		if d != nil {
			c := *d
			c.Tags = slices.Clone(d.Tags)
			c.ImportValues, _ = codec.CloneValue(d.ImportValues).([]any)
			out[i] = &c
		}
	}
	return out
}

func cloneLock(l *chartv2.Lock) *chartv2.Lock {
	if l == nil {
		return nil
	}
	c := *l
	c.Dependencies = cloneDependencies(l.Dependencies)
	return &c
}
