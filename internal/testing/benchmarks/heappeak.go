package benchmarks

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// heapSampleEvery is how often a heapPeak samples the heap.
const heapSampleEvery = time.Millisecond

// heapInUse returns the bytes of the heap's spans in use (runtime.MemStats'
// HeapInuse: live objects, garbage not yet swept, and the free room of the
// spans that hold them), from runtime/metrics, which reads it without
// stopping the world.
func heapInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64() + s[1].Value.Uint64()
}

// heapPeak samples heapInUse every heapSampleEvery on a goroutine of its
// own, from startHeapPeak to stop, after a full collection: what an
// operation run in between holds at its peak, above what the process held
// before (base).
type heapPeak struct {
	base uint64
	quit chan struct{}
	peak chan uint64
}

// startHeapPeak collects garbage, takes the base and starts sampling.
func startHeapPeak() *heapPeak {
	runtime.GC()
	h := &heapPeak{base: heapInUse(), quit: make(chan struct{}), peak: make(chan uint64)}
	go func() {
		t := time.NewTicker(heapSampleEvery)
		defer t.Stop()
		peak := h.base
		for {
			if n := heapInUse(); n > peak {
				peak = n
			}
			select {
			case <-h.quit:
				if n := heapInUse(); n > peak {
					peak = n
				}
				h.peak <- peak
				return
			case <-t.C:
			}
		}
	}()
	return h
}

// stop ends the sampling and returns the peak above the base, in bytes.
func (h *heapPeak) stop() uint64 {
	close(h.quit)
	return <-h.peak - h.base
}
