package helm3codec

import (
	"testing"
)

// goldenChartDigests pins the digests of the version-2 chart parts of the
// edge charts, as written before the wire format moved to package codec:
// a stored chart keeps its digest across releases of helmstore, and a chart
// written through Helm 3 and through Helm 4 is stored once.
var goldenChartDigests = map[string]string{
	"all empty data": "a860e8b8043feb0a897e2d419b52e1ec4b88fdd0b98bffff24f3308bfec445d5",
	"deep values":    "bbb893b95de02138a3b2e36795a82f866c62da8ab1a390da4259619c1eabc38c",
	"empty":          "f339b94b27a386ce3abe76377cee43b25506b1e9ba711d595ccaed6e0eec680a",
	"full metadata":  "ec9086f53c3dac54cffa20b54cc372524f257ee99effb080dbb9a72a301caf03",
	"odd files":      "89b1cad2573d0526edf0ebabef9d6788fa7eda27b5adeef5710f3c95a042f225",
	"stack":          "e7ab5ab91944d5f6ee42fce8c7d0e5c9b605540210742cd103dfe9b32e945ad4",
	"values types":   "5203e0f62d2f710634c395517f9835cdc2432eac59301da9030324d05dc7e406",
	"zero":           "80469a5b236a20fed2cc30f859a55f960f7e2546ad92f780634f3403ac50037e",
}

func TestChartBytesPinned(t *testing.T) {
	t.Parallel()
	for name, c := range edgeCharts() {
		p := newPart(KindChart, mustEncode(t, c))
		if got := p.Digest.String(); got != goldenChartDigests[name] {
			t.Errorf("%s: digest %s, want %s: the bytes of a version-2 chart part changed", name, got, goldenChartDigests[name])
		}
	}
}
