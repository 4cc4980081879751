package helm4codec

import (
	"encoding/json"
	"testing"

	rel3 "helm.sh/helm/v3/pkg/release"
	rspb "helm.sh/helm/v4/pkg/release/v1"

	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/fixture/fixture4"
)

// stackHead is the head JSON of a revision of fixture.Stack, as Helm 4's
// face stores it (the release without chart, values and manifest).
func stackHead(b testing.TB) []byte {
	r := fixture4.Helm4(fixture.StackRevisions("bench", "default", 1)[0])
	h := *r
	h.Chart, h.Config, h.Manifest = nil, nil, ""
	raw, err := json.Marshal(&h)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkHeadDecode is the cost of decoding one head of the benchmarks'
// release: Helm 3's types, Helm 4's types through Helm's own UnmarshalJSON,
// and the codec's decodeHead.
func BenchmarkHeadDecode(b *testing.B) {
	raw := stackHead(b)
	b.Run("helm3", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var r rel3.Release
			if err := json.Unmarshal(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("helm4-json", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var r rspb.Release
			if err := json.Unmarshal(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("helm4", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			var r rspb.Release
			if err := decodeHead(raw, &r); err != nil {
				b.Fatal(err)
			}
		}
	})
}
