package helm3codec

import (
	"testing"

	"github.com/helmstore/helmstore/internal/testing/fixture"
)

// BenchmarkSplitRelease is the CPU cost of taking a ~2 MB release apart
// (canonical encoding and SHA-256 of every part; no compression).
func BenchmarkSplitRelease(b *testing.B) {
	r := fixture.LargeRelease("big", "ns", 2)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := SplitRelease(r); err != nil {
			b.Fatal(err)
		}
	}
}
