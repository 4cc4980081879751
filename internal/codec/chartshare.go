package codec

import "time"

// ChartShare is what the charts a face builds from one Share of a decoded
// chart part have in common: a copy of the part's values and of its file
// bytes (schema, templates and files back to back, in order: one
// allocation, not cleared first).
type ChartShare struct {
	chart  *Chart
	files  []byte
	values map[string]interface{}
}

// Share copies the part's values and file bytes, for the charts of one call.
func (p *Chart) Share() *ChartShare {
	return &ChartShare{chart: p, files: append([]byte(nil), p.blobData...), values: CloneMap(p.values)}
}

// Adopt is Share without copying: the ChartShare holds the part's own
// values and file bytes. Only for a part that nothing else holds or will
// build a chart from again (a part read for one call and not cached), so
// that a cold read does not copy a chart it is about to drop.
func (p *Chart) Adopt() *ChartShare {
	return &ChartShare{chart: p, files: p.blobData, values: p.values}
}

// Of reports whether sh is a Share or Adopt of p (false for a nil sh).
func (sh *ChartShare) Of(p *Chart) bool { return sh != nil && sh.chart == p }

// Values returns the chart's values: the share's, common to every chart
// built on it.
func (sh *ChartShare) Values() map[string]interface{} { return sh.values }

// Schema returns the chart's schema (nil for none) in the share's bytes.
func (sh *ChartShare) Schema() []byte {
	if !sh.chart.hasSchema {
		return nil
	}
	return sh.data(0, sh.chart.schemaSize)
}

// data returns size bytes at off in the share's file bytes, a non-nil empty
// slice for none.
func (sh *ChartShare) data(off, size int) []byte {
	if size == 0 {
		return []byte{}
	}
	return sh.files[off : off+size : off+size]
}

// BuildFiles builds a face's files (F is its Helm's file type) from table t
// of sh's chart (Chart.Templates or Chart.Files): nil for a nil table, a
// nil entry for a nil file, and otherwise a file fill sets from its name,
// its data (nil, or in sh's bytes) and its mod time. Two allocations,
// whatever the number of files.
func BuildFiles[F any](sh *ChartShare, t *ChartTable, fill func(f *F, name string, data []byte, modTime time.Time)) []*F {
	if t.isNil {
		return nil
	}
	out := make([]*F, len(t.entries))
	fs := make([]F, t.files)
	for i := range t.entries {
		e := &t.entries[i]
		var data []byte
		switch e.flag {
		case fileNil:
			continue
		case fileData:
			data = sh.data(e.off, e.size)
		}
		f := &fs[0]
		fs = fs[1:]
		fill(f, e.name, data, e.modTime)
		out[i] = f
	}
	return out
}
