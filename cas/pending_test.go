package cas_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// TestLostAnswersThenRetry runs castest.LostAnswersThenRetry on the
// in-memory store, losing the answers of runs of the writer's writes
// (numbered from 0).
func TestLostAnswersThenRetry(t *testing.T) {
	t.Parallel()
	data := castest.New(nil)
	runs := [][2]int{{0, 0}, {0, 3}, {1, 1}, {1, 4}, {1, 12}, {2, 8}, {4, 30}}
	castest.LostAnswersThenRetry(t, runs, func() helm3.Store {
		s, _ := open(data.Process(nil), helm3.DefaultCacheBytes)
		return s
	}, func(from, to int) (helm3.Store, func() int) {
		var lost atomic.Int64
		s, _ := open(data.Process(func(op castest.Op) castest.Fault {
			if op.Write >= from && op.Write <= to {
				lost.Add(1)
				return castest.LoseAnswer
			}
			return castest.None
		}), helm3.DefaultCacheBytes)
		return s, func() int { return int(lost.Load()) }
	})
}

// TestDeadWriterPendingWindow runs castest.DeadWriterPendingWindow on the
// in-memory store, the writer crashing after its first write.
func TestDeadWriterPendingWindow(t *testing.T) {
	t.Parallel()
	const timeout, skew = time.Minute, 30 * time.Second
	openWith := func(s cas.ObjectStore, clock cas.Clock) helm3.Store {
		cfg := protocol
		cfg.ClockSkew = skew
		if clock != nil {
			cfg.Clock = clock
		}
		return helm3.New(cas.New(s, cfg), &driver.Config{Name: "castest", CacheBytes: helm3.DefaultCacheBytes, Timeout: timeout,
			Log: func(string, ...interface{}) {}}).Namespace(ns)
	}
	data := castest.New(nil)
	castest.DeadWriterPendingWindow(t, timeout, skew, func() (helm3.Store, func(error) bool) {
		return openWith(data.Process(castest.CrashAt(1)), nil), nil
	}, func(clock cas.Clock) helm3.Store {
		return openWith(data.Process(nil), clock)
	})
}
