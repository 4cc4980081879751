package engine

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/partcache"
)

// Engine is the shared state of a store: backend, part cache, config.
type Engine[R any] struct {
	codec   Codec[R]
	name    string
	backend driver.Backend
	cache   *partcache.Cache
	// keyframes are what writes take deltas against (keyframes.go).
	keyframes *keyframes
	// damaged are the part copies reads found damaged, which the next
	// write carrying one rewrites (damaged.go).
	damaged *partcache.LRU[partKey, struct{}]
	// noDeltas, set by SetDeltas for benchmarks, stores every part full.
	noDeltas atomic.Bool
	cfg      *driver.Config
	now      func() time.Time
	// encrypts says the backend encrypts at rest (package encryption);
	// a store that does not writes nothing into an encrypted namespace
	// (plaintext.go).
	encrypts bool
	// sealedNS holds the namespaces checkPlaintext found encrypted, with
	// the error a write there returns.
	sealedNS sync.Map

	closeOnce sync.Once
	closeErr  error
}

// DefaultNamespace is the namespace of the view New returns, and of a
// release written with no namespace through an all-namespaces view, as in
// Helm's own drivers.
const DefaultNamespace = "default"

// New returns the engine over b as a view scoped to DefaultNamespace.
func New[R any](b driver.Backend, cfg *driver.Config, c Codec[R]) *View[R] {
	if cfg.Log == nil {
		c := *cfg
		c.Log = func(string, ...interface{}) {}
		cfg = &c
	}
	if len(cfg.EncryptionKeys) > 0 {
		// b encrypts from here: the engine's Config (Handle.Config) says
		// no more, so that a store made over Handle.Backend does not
		// encrypt twice.
		b = encrypted(b, cfg)
		c := *cfg
		c.EncryptionKeys = nil
		cfg = &c
	}
	e := &Engine[R]{codec: c, name: cfg.Name, backend: b, cache: partcache.New(cfg.CacheBytes), keyframes: newKeyframes(keyframeBytes), damaged: newDamagedParts(), cfg: cfg, now: time.Now,
		encrypts: encrypts(b)}
	return &View[R]{e: e, ns: DefaultNamespace}
}

// View is the engine scoped to one namespace ("" = all): what a face's
// Store wraps. Its methods are Helm's driver methods.
type View[R any] struct {
	e  *Engine[R]
	ns string
}

// Name returns the registered name of the backend.
func (v *View[R]) Name() string { return v.e.name }

// Namespace returns a view of the same engine scoped to ns.
func (v *View[R]) Namespace(ns string) *View[R] { return &View[R]{e: v.e, ns: ns} }

// Close closes the backend (once, whichever view closes it).
func (v *View[R]) Close() error {
	v.e.closeOnce.Do(func() { v.e.closeErr = v.e.backend.Close() })
	return v.e.closeErr
}

// Stats reports what the view's namespace holds.
func (v *View[R]) Stats(ctx context.Context) (driver.Stats, error) {
	return v.e.backend.Stats(ctx, v.ns)
}

// SetDeltas turns delta encoding of values and manifests on (the default)
// or off, for benchmarks and measurements comparing the two. It has no
// effect on what is already stored.
func (v *View[R]) SetDeltas(on bool) { v.e.noDeltas.Store(!on) }

// Backend returns the backend under the view.
func (v *View[R]) Backend() driver.Backend { return v.e.backend }

// Config returns the configuration the engine was opened with.
func (v *View[R]) Config() *driver.Config { return v.e.cfg }

// Scope returns the view's namespace ("" for all).
func (v *View[R]) Scope() string { return v.ns }

func (v *View[R]) ctx() (context.Context, context.CancelFunc) {
	if v.e.cfg.Timeout > 0 {
		return context.WithTimeout(context.Background(), v.e.cfg.Timeout)
	}
	return context.WithCancel(context.Background())
}

// fail returns err of operation op on release key in namespace ns: a
// *driver.ReleaseError naming them, except for the two outcomes Helm's
// drivers report with their bare sentinels (not found, already exists),
// which tools compare with == (Helm's own action tests do): those are the
// bare sentinel, and their context goes to the log line instead.
func (v *View[R]) fail(op, ns, key string, err error) error {
	re := &driver.ReleaseError{Op: op, Namespace: ns, Key: key, Err: err}
	for _, s := range bareSentinels {
		if errors.Is(err, s) {
			v.e.cfg.Log("helmstore: %v", re)
			return s
		}
	}
	return re
}

// bareSentinels are the outcomes fail returns bare.
var bareSentinels = [...]error{driver.ErrReleaseNotFound, driver.ErrReleaseExists}

// Handle is what the module's tests and benchmarks reach under a face's
// Store: its backend and its settings.
type Handle interface {
	Backend() driver.Backend
	// Config is the configuration the store was opened with (not to be
	// changed).
	Config() *driver.Config
	// Scope is the view's namespace ("" for all).
	Scope() string
	SetDeltas(on bool)
	// Seal seals, in place, the releases of the view's namespace that an
	// encrypting store finds in plaintext (seal.go).
	Seal(ctx context.Context, progress func(namespace, key string, err error)) (SealResult, error)
}

// Of returns the engine view under s, a face's Store, or nil if s is not
// one.
func Of(s any) Handle {
	if f, ok := s.(interface{ EngineView() Handle }); ok {
		return f.EngineView()
	}
	return nil
}
