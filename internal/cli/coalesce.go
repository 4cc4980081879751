package cli

import (
	"encoding/json"
	"fmt"

	chart3 "helm.sh/helm/v3/pkg/chart"
	chartutil3 "helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v4/pkg/chart/common/util"
	chart4 "helm.sh/helm/v4/pkg/chart/v2"
)

// computedValues returns a release's values coalesced with its chart's, as
// the Helm helm (3 or 4) computes them for get values --all, get all and
// status --debug: the two differ where a chart's default is null (Helm 3
// keeps the key with a null value, Helm 4 leaves it out), and the output
// must be that Helm's own.
func computedValues(helm int, ch *chart4.Chart, vals map[string]any) (map[string]any, error) {
	if helm != 3 {
		v, err := util.CoalesceValues(ch, vals)
		return v.AsMap(), err
	}
	// The chart as Helm 3 reads it from storage: its JSON form, which is
	// the same in both Helms (a chart stored holds no subcharts).
	b, err := json.Marshal(ch)
	if err != nil {
		return nil, err
	}
	var ch3 chart3.Chart
	if err := json.Unmarshal(b, &ch3); err != nil {
		return nil, fmt.Errorf("the chart in Helm 3's form: %w", err)
	}
	v, err := chartutil3.CoalesceValues(&ch3, vals)
	return v.AsMap(), err
}
