package crsplit

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/internal/codec"
)

// Sizes that decide where bytes go. Base64 (how JSON carries bytes) adds a
// third, so a full chunk is about 800 KiB serialized: under MaxObjectBytes
// with room for metadata.
const (
	// ChunkBytes is the most frame bytes one Chunk object holds.
	ChunkBytes = 600 << 10
	// InlinePartBytes is the largest part frame kept inside its Chart,
	// Values or Manifest object. Larger frames go to Chunk objects, so
	// that adding or removing an owner (a write of the whole object) stays
	// cheap for the parts that are shared the most: charts, and the
	// keyframes every later revision's deltas reference (a 53 KB keyframe
	// manifest inline made each Create re-store it: 90 KB written per
	// values-only Create at 64 KiB, 20 KB at 8 KiB).
	InlinePartBytes = 8 << 10
	// InlineReleaseBytes is the largest release record frame (the
	// compressed head body) kept in its Release, about 512 KiB in base64;
	// larger frames are stored in Chunk objects.
	InlineReleaseBytes = 384 << 10
)

// PendingTimeout is how old a Release still marked pending must be before
// it is taken to be left by a writer that stopped: removed with the parts
// only it owned when incomplete, committed when complete.
const PendingTimeout = 10 * time.Minute

// createFirstBytes: parts up to this canonical size that the store has not
// seen are created without first trying to add an owner to them.
const createFirstBytes = 1 << 20

const (
	// labelPending marks a Release being created: =parts, readers see it
	// only once all its parts are stored and owned by it. (Any other
	// value, =true, was written by earlier versions before the parts:
	// never visible.)
	labelPending = "helmstore.io/pending"
	pendingParts = "parts"
	pendingOld   = "true"
	// reservedPrefix is the label prefix crsplit keeps for itself.
	reservedPrefix = "helmstore.io/"
	// workers bounds the requests one operation has in flight.
	workers = 8
)

// backend is backend.Backend over the Kubernetes API.
type kubeBackend struct {
	c   *client
	log func(format string, v ...interface{})
	now func() time.Time
	// pendingTimeout is PendingTimeout, shorter in tests.
	pendingTimeout time.Duration
	// hooks let tests stop an operation half way, as a crash would.
	hooks hooks
	// known remembers parts seen stored, to guess the first request.
	known *knownParts
	// seen remembers the Release objects last read or written.
	seen *seenReleases
	// commits tracks the commits running in the background.
	commits *commits
	// writing serializes this store's Updates of one release.
	writing *keyLocks
}

var _ backend.Backend = (*kubeBackend)(nil)

// hooks are called at the points a crash or a concurrent writer matters.
// A hook returning an error stops the operation there; errCrash stops it
// without any cleanup, as a killed process would.
type hooks struct {
	beforePart   func(p *codec.Part) error   // Create, Update: before storing part p
	beforeCommit func(h *backend.Head) error // Create: Release and parts written, not committed
	beforePut    func(h *backend.Head) error // Update: head read, not yet written
	// cleanupDecided: cleanupPart has read a part and decided; its write
	// (delete or owner removal) comes next.
	cleanupDecided func(res, name string)
}

func newBackend(c *client, log func(string, ...interface{})) *kubeBackend {
	return &kubeBackend{c: c, log: log, now: time.Now, pendingTimeout: PendingTimeout, known: newKnownParts(4096), seen: newSeenReleases(4096), commits: newCommits(), writing: newKeyLocks()}
}

// Close waits for the commits running in the background.
func (b *kubeBackend) Close() error {
	b.commits.waitAll()
	return nil
}

// commits tracks background commits by release, so that an Update or Delete
// of the release waits for its commit instead of racing it.
type commits struct {
	mu      sync.Mutex
	running map[releaseKey]chan struct{}
	n       int        // commits running
	idle    *sync.Cond // signalled when n drops to 0
}

func newCommits() *commits {
	c := &commits{running: map[releaseKey]chan struct{}{}}
	c.idle = sync.NewCond(&c.mu)
	return c
}

// start records a commit of ns/key and returns the function that ends it.
func (c *commits) start(ns, key string) (done func()) {
	k, ch := releaseKey{ns, key}, make(chan struct{})
	c.mu.Lock()
	c.running[k] = ch
	c.n++
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.running[k] == ch {
			delete(c.running, k)
		}
		if c.n--; c.n == 0 {
			c.idle.Broadcast()
		}
		c.mu.Unlock()
		close(ch)
	}
}

// waitAll returns once no commit is running.
func (c *commits) waitAll() {
	c.mu.Lock()
	for c.n > 0 {
		c.idle.Wait()
	}
	c.mu.Unlock()
}

// wait returns once no commit of ns/key is running, or ctx is done.
func (c *commits) wait(ctx context.Context, ns, key string) error {
	c.mu.Lock()
	ch := c.running[releaseKey{ns, key}]
	c.mu.Unlock()
	if ch == nil {
		return nil
	}
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

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

// ownedBy reports whether m has an ownerReference to the object uid.
func ownedBy(m *metav1.ObjectMeta, uid types.UID) bool {
	for _, o := range m.OwnerReferences {
		if o.UID == uid {
			return true
		}
	}
	return false
}

func ownerRef(kind string, m *metav1.ObjectMeta) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: m.Name, UID: m.UID}
}

// parallel runs fn(0..n-1) with at most workers in flight and returns the
// first error, once all have finished (a failure does not cancel the
// others: each leaves the cluster in a state its own cleanup expects).
func parallel(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	if n == 1 {
		return fn(ctx, 0)
	}
	var g errgroup.Group
	g.SetLimit(workers)
	for i := 0; i < n; i++ {
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}

// cleanupContext is for work that must finish even when the caller's
// context has ended (rolling back a half-done write).
func cleanupContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 2*time.Minute)
}
