package cas

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/casprobe"
	"github.com/helmstore/helmstore/internal/parallel"
	"github.com/helmstore/helmstore/internal/partcache"
)

// Backend is driver.Backend over an ObjectStore: the no-transaction
// protocol of this package's documentation.
type Backend struct {
	s     ObjectStore
	adder ReferrerAdder // s, if it adds referrers atomically
	cfg   Config
	// pendingTimeout is cfg.PendingTimeout, changed by tests.
	pendingTimeout atomic.Int64
	// probe is what tests reach of b: hooks, and the functions above.
	probe *casprobe.Probe
	// known remembers parts seen stored, to guess the first request.
	known *partcache.LRU[partKey, struct{}]
	// seen remembers the head objects last read or written.
	seen *seenHeads
	// bg tracks the work running in the background (commits).
	bg *background
	// writing serializes this store's Updates of one release.
	writing *keyLocks
}

var _ driver.Backend = (*Backend)(nil)

// New returns the protocol over s, tuned by cfg.
func New(s ObjectStore, cfg Config) *Backend {
	b := &Backend{s: s, cfg: cfg.withDefaults(), known: partcache.NewLRU[partKey, struct{}](4096),
		seen: newSeenHeads(4096), bg: newBackground(), writing: newKeyLocks()}
	b.adder, _ = s.(ReferrerAdder)
	b.pendingTimeout.Store(int64(b.cfg.PendingTimeout))
	b.probe = b.newProbe()
	return b
}

func (b *Backend) pendingAfter() time.Duration { return time.Duration(b.pendingTimeout.Load()) }

func init() {
	casprobe.Of = func(b any) *casprobe.Probe { return b.(*Backend).probe }
}

// newProbe returns what tests reach of b (internal/casprobe).
func (b *Backend) newProbe() *casprobe.Probe {
	return &casprobe.Probe{
		Store:             b.s,
		WaitCommits:       func() { b.bg.waitAll(-1) },
		SetPendingTimeout: func(d time.Duration) { b.pendingTimeout.Store(int64(d)) },
		ReadChunks: func(ctx context.Context, ns string, names []string) ([]byte, error) {
			return b.readChunks(ctx, chunkSet{ns: ns, count: len(names), size: -1, limit: maxPartFrame, names: names, what: "chunks"}, false)
		},
	}
}

// hooks are the test hooks of b (casprobe.Hooks), all nil but in tests.
func (b *Backend) hooks() *casprobe.Hooks { return &b.probe.Hooks }

// retry runs attempt under the retry policy (Retry.do) on b's clock.
func (b *Backend) retry(ctx context.Context, what string, attempt func(ctx context.Context) (done bool, err error)) error {
	return b.cfg.Retry.do(ctx, b.cfg.Clock, what, attempt)
}

// Close waits for the work running in the background (commits), for
// Config.CloseTimeout at most: what is still running then is stopped, and
// said in the log, with what it leaves for later cleanups and Collect.
// Then it closes the store if it is an io.Closer.
func (b *Backend) Close() error {
	for _, t := range b.bg.waitAll(b.cfg.CloseTimeout) {
		b.log("helmstore: closing the store, the %s of release %q in namespace %q did not finish within %s, and is stopped: %s",
			t.what, t.key, t.ns, b.cfg.CloseTimeout, t.left)
	}
	b.bg.stop(errClosed)
	if c, ok := b.s.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (b *Backend) log(format string, v ...interface{}) { b.cfg.Log(format, v...) }

// parallel runs fn(0..n-1) with at most Config.Workers calls in flight,
// and returns the first error once all have returned.
func (b *Backend) parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	return parallel.Run(ctx, n, b.cfg.Workers, fn)
}

// cleanupContext is for work that must finish even when the caller's
// context has ended (rolling back a half-done write).
func (b *Backend) cleanupContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), b.cfg.CleanupTimeout)
}

// partKey names a part in a namespace.
type partKey struct {
	ns string
	d  driver.Digest
}

func (b *Backend) knows(ns string, d driver.Digest) bool {
	_, ok := b.known.Get(partKey{ns, d})
	return ok
}
func (b *Backend) learn(ns string, d driver.Digest)      { b.known.Put(partKey{ns, d}, struct{}{}) }
func (b *Backend) forgetPart(ns string, d driver.Digest) { b.known.Remove(partKey{ns, d}) }

// releaseKey names a release in a namespace.
type releaseKey struct{ ns, key string }

// keyLocks are per-release mutexes that honour a context.
type keyLocks struct {
	mu sync.Mutex
	m  map[releaseKey]*keyLock
}

type keyLock struct {
	ch      chan struct{} // holds a token while locked
	waiters int           // holders and waiters; the lock goes at 0
}

func newKeyLocks() *keyLocks { return &keyLocks{m: map[releaseKey]*keyLock{}} }

// lock locks ns/key and returns the function that unlocks it, or ctx's
// error.
func (l *keyLocks) lock(ctx context.Context, ns, key string) (unlock func(), err error) {
	k := releaseKey{ns, key}
	l.mu.Lock()
	kl := l.m[k]
	if kl == nil {
		kl = &keyLock{ch: make(chan struct{}, 1)}
		l.m[k] = kl
	}
	kl.waiters++
	l.mu.Unlock()
	release := func() {
		l.mu.Lock()
		if kl.waiters--; kl.waiters == 0 {
			delete(l.m, k)
		}
		l.mu.Unlock()
	}
	select {
	case kl.ch <- struct{}{}:
		return func() { <-kl.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}
