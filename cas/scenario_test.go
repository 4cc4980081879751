package cas_test

import (
	"time"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
)

// The scenarios and their checks are castest's (scenario.go), shared with
// the backends that run them over their own service.

// ns is the namespace every scenario writes in.
const ns = castest.Namespace

type scenario = castest.Scenario

func scenarios() []scenario { return castest.Scenarios() }

// protocol makes every size path of the protocol run on small releases
// (chunked parts, chunked head bodies), and retries without waiting (its
// Clock: no test advances it).
var protocol = cas.Config{
	InlinePartBytes: 256, InlineBodyBytes: 256, ChunkBytes: 512,
	Retry:          cas.Retry{First: time.Millisecond, Max: 20 * time.Millisecond, NoDeadline: 10 * time.Second},
	CleanupTimeout: 20 * time.Second,
	Clock:          &castest.Clock{},
}

// open returns a store over os with the protocol's small sizes; cacheBytes
// 0 makes every read go to the object store.
func open(os cas.ObjectStore, cacheBytes int64) (helm3.Store, *cas.Backend) {
	return openClock(os, cacheBytes, nil)
}

// openClock is open with clock as the protocol's Clock (nil: protocol's).
func openClock(os cas.ObjectStore, cacheBytes int64, clock cas.Clock) (helm3.Store, *cas.Backend) {
	cfg := protocol
	if clock != nil {
		cfg.Clock = clock
	}
	b := cas.New(os, cfg)
	s := helm3.New(b, &driver.Config{Name: "castest", CacheBytes: cacheBytes, Timeout: 30 * time.Second, Log: func(string, ...interface{}) {}})
	return s.Namespace(ns), b
}

func key(name string, v int) string { return driver.MakeKey(name, v) }
