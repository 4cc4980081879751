package helm4

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/face"
	"github.com/helmstore/helmstore/internal/registry"
)

// DefaultCacheBytes is the default bound of a Store's decoded-part cache
// (driver.DefaultCacheBytes).
const DefaultCacheBytes = driver.DefaultCacheBytes

// DefaultTimeout bounds each operation of a store opened without
// WithTimeout (driver.DefaultTimeout).
const DefaultTimeout = driver.DefaultTimeout

// DefaultNamespace is the namespace of the Store that Open returns, as in
// Helm's own drivers. Use Store.Namespace for others.
const DefaultNamespace = engine.DefaultNamespace

// Option changes a Config before the store is opened.
type Option func(*driver.Config)

// WithCacheBytes bounds the decoded-part cache (0 disables it).
func WithCacheBytes(n int64) Option { return face.WithCacheBytes(n) }

// WithTimeout bounds every Helm operation on the store (the default is
// DefaultTimeout). WithTimeout(0), or a negative d, removes the bound: an
// operation then runs until it ends or its connection fails, however long
// that takes.
func WithTimeout(d time.Duration) Option { return face.WithTimeout(d) }

// WithLogger sets the handler of the store's logger (Store.SetLogger
// changes it later); without it the store logs to slog.Default's handler,
// as Helm 4's own drivers do. helmstore logs at debug level only.
func WithLogger(h slog.Handler) Option {
	return func(c *driver.Config) {
		if h == nil {
			h = slog.DiscardHandler
		}
		c.Logger = slog.New(h)
	}
}

// WithRESTClientGetter sets how Kubernetes backends reach the cluster.
func WithRESTClientGetter(g genericclioptions.RESTClientGetter) Option {
	return face.WithRESTClientGetter(g)
}

// WithEncryptionKeys switches on encryption at rest: every release's parts
// and head body are sealed under data keys wrapped by the key-encryption
// keys urls name (gocloud.dev/secrets keeper URLs: the first wraps new
// keys, the others only unwrap, for rotation; "namespace=URL" is a key
// for that namespace alone, package encryption). It overrides
// HELM_DRIVER_ENCRYPTION_KEYS, which NewConfig reads; no URLs switches it
// off. The program must import github.com/helmstore/helmstore/encryption
// and the keeper's package.
func WithEncryptionKeys(urls ...string) Option { return face.WithEncryptionKeys(urls...) }

// NewConfig returns the Config that Open gives the opener of driver name:
// connection string conn, a part cache of DefaultCacheBytes, a per-operation
// bound of DefaultTimeout and slog.Default's handler for logs, then opts
// applied. A backend's own Open, which takes options without going through
// the registry (crsplit.Open, say), starts from it, so that its defaults are
// the registry's.
func NewConfig(name, conn string, opts ...Option) *driver.Config {
	fs := make([]func(*driver.Config), len(opts))
	for i, o := range opts {
		fs[i] = o
	}
	c, _ := withSwap(face.NewConfig(name, conn, fs...))
	return c
}

// Redact returns a connection string with its passwords, keys and tokens
// replaced, for logs and messages (registry.Redact): every form any backend
// takes, malformed ones included.
func Redact(conn string) string { return registry.Redact(conn) }

// swapHandler is the handler of a store's logger: it passes records to a
// handler that Store.SetLogger replaces, for every view and for the backend,
// which logs through the same Config.
type swapHandler struct {
	h atomic.Pointer[slog.Handler]
	// logger is the one Logger over the handler: what Store.Logger and
	// a Config's Logger return, built once.
	logger *slog.Logger
}

func newSwapHandler(h slog.Handler) *swapHandler {
	s := new(swapHandler)
	s.set(h)
	s.logger = slog.New(s)
	return s
}

func (s *swapHandler) set(h slog.Handler) {
	if h == nil {
		h = slog.DiscardHandler
	}
	s.h.Store(&h)
}

func (s *swapHandler) load() slog.Handler { return *s.h.Load() }

func (s *swapHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return s.load().Enabled(ctx, l)
}
func (s *swapHandler) Handle(ctx context.Context, r slog.Record) error {
	return s.load().Handle(ctx, r)
}
func (s *swapHandler) WithAttrs(as []slog.Attr) slog.Handler { return s.load().WithAttrs(as) }
func (s *swapHandler) WithGroup(g string) slog.Handler       { return s.load().WithGroup(g) }

// logf is a Config's Log: a debug record.
func (s *swapHandler) logf(format string, v ...interface{}) {
	ctx := context.Background()
	if h := s.load(); h.Enabled(ctx, slog.LevelDebug) {
		r := slog.NewRecord(time.Now(), slog.LevelDebug, fmt.Sprintf(format, v...), 0)
		_ = h.Handle(ctx, r)
	}
}

// withSwap returns cfg logging through a swapHandler (the one it already
// has, or a new one over its Logger's handler, else slog.Default's), and
// that handler. cfg is copied when it has to change.
func withSwap(cfg *driver.Config) (*driver.Config, *swapHandler) {
	if cfg.Logger != nil {
		if sw, ok := cfg.Logger.Handler().(*swapHandler); ok {
			return cfg, sw
		}
	}
	h := slog.Default().Handler()
	if cfg.Logger != nil {
		h = cfg.Logger.Handler()
	}
	sw := newSwapHandler(h)
	c := *cfg
	c.Logger, c.Log = sw.logger, sw.logf
	return &c, sw
}
