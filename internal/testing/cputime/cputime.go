// Package cputime measures the CPU time a benchmark's process spends per
// operation (user and system): on a machine shared with other work it varies
// far less than elapsed time, and it counts the client's work (encoding,
// hashing, compression), not a database server's.
package cputime

import "testing"

// Start starts counting; the function it returns reports the CPU time per
// operation since then as the metric unit ("cpu-ms/op" or "cpu-ns/op"),
// and nothing where the platform does not say.
func Start(b *testing.B, unit string) func() {
	start := used()
	return func() {
		if start == 0 || b.N == 0 {
			return
		}
		per := float64(used()-start) / float64(b.N)
		if unit == "cpu-ms/op" {
			per /= 1e6
		}
		b.ReportMetric(per, unit)
	}
}
