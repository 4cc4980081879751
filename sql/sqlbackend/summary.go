package sqlbackend

import (
	"strings"
	"unicode/utf8"

	"github.com/helmstore/helmstore/driver"
)

// summaryColumns are the columns of a head's summary (driver.Head's
// HasSummary and the fields it vouches for), which List reads instead of
// the body.
const summaryColumns = `has_summary, chart_name, chart_version, app_version, updated, description`

// Longest summary fields stored, in bytes: the chart's name, version and
// app version and the time fit maxSummaryField (MySQL's VARCHAR(255) holds
// 255 characters), a description maxDescription (MySQL's MEDIUMTEXT holds
// 16 MiB).
const (
	maxSummaryField = 255
	maxDescription  = 1 << 20
)

// summaryValues returns the values of summaryColumns for h. A summary that
// some dialect could not store exactly (a field too long, not UTF-8, or
// holding a NUL, which PostgreSQL's text refuses) is not stored: the row
// says it has none, as one written before the columns existed, and the
// engine reads that release whole to list it.
func summaryValues(h *driver.Head) []any {
	short := []string{h.ChartName, h.ChartVersion, h.AppVersion, h.Updated}
	ok := h.HasSummary && storable(h.Description, maxDescription)
	for _, s := range short {
		ok = ok && storable(s, maxSummaryField)
	}
	if !ok {
		return []any{false, "", "", "", "", ""}
	}
	return []any{true, h.ChartName, h.ChartVersion, h.AppVersion, h.Updated, h.Description}
}

func storable(s string, limit int) bool {
	return len(s) <= limit && utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
