// Package parallel runs independent pieces of CPU work on every core.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// Each calls fn(0), ..., fn(n-1) on up to GOMAXPROCS goroutines and returns
// when all have returned; with one core or one item, on the caller's
// goroutine.
func Each(n int, fn func(i int)) {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				fn(i)
			}
		}()
	}
	wg.Wait()
}
