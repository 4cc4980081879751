package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"sync"
	"sync/atomic"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// go-redis logs through one logger for the whole process (redis.SetLogger).
// So that a store's lines go to that store's log (driver.Config.Log), this
// package installs a logger that routes each line by what it can be
// attributed to:
//
//   - a line about a dial error goes to the store whose dialer failed: every
//     store dials through its own dialer (storeDialer), which marks its
//     errors with the store (ownedError; the text is go-redis's own);
//   - a line go-redis logs with the context of an operation (its Logging
//     interface takes one) goes to the store of that operation: every
//     store's client has a hook (sinkHook) that puts the store's log in
//     the context of each command, pipeline and dial (so, for instance, a
//     Sentinel's "GetMasterAddrByName failed" while a store looks for its
//     primary goes to that store);
//   - any other line (go-redis's own goroutines, context.Background or
//     TODO: a Cluster's "all nodes are marked as failed") goes to the log
//     of the one store open, when only one is (a Helm CLI, most
//     controllers); with several open it cannot be told apart among them,
//     and goes to the process's standard log (package log), never to an
//     arbitrary store's. So does a line when no store is open.
//
// A program that calls redis.SetLogger itself after importing this package
// replaces the routing, and its stores' go-redis lines go where it says.

func init() {
	goredis.SetLogger(router{})
}

// logSink is one store's log, while the store is open.
type logSink struct {
	log    func(format string, v ...interface{})
	closed atomic.Bool
}

// openSinks are the logs of the stores open in the process.
var openSinks struct {
	mu sync.Mutex
	m  map[*logSink]bool
}

// newLogSink returns the log of a store being opened, counted open until
// close.
func newLogSink(log func(format string, v ...interface{})) *logSink {
	s := &logSink{log: log}
	openSinks.mu.Lock()
	if openSinks.m == nil {
		openSinks.m = map[*logSink]bool{}
	}
	openSinks.m[s] = true
	openSinks.mu.Unlock()
	return s
}

func (s *logSink) close() {
	s.closed.Store(true)
	openSinks.mu.Lock()
	delete(openSinks.m, s)
	openSinks.mu.Unlock()
}

// onlyOpen returns the log of the one open store, or nil unless exactly
// one is open.
func onlyOpen() *logSink {
	openSinks.mu.Lock()
	defer openSinks.mu.Unlock()
	if len(openSinks.m) != 1 {
		return nil
	}
	for s := range openSinks.m {
		return s
	}
	return nil
}

// print sends line to the store's log, and reports whether it was open.
func (s *logSink) print(line string) bool {
	if s == nil || s.closed.Load() {
		return false
	}
	s.log("helmstore: redis: go-redis: %s", line)
	return true
}

// router is the go-redis logger of the process.
type router struct{}

// Printf sends one go-redis line where it belongs.
func (router) Printf(ctx context.Context, format string, v ...interface{}) {
	line := fmt.Sprintf(format, v...)
	for _, a := range v {
		var o *ownedError
		if err, ok := a.(error); ok && errors.As(err, &o) && o.sink.print(line) {
			return
		}
	}
	if ctx != nil {
		if s, _ := ctx.Value(sinkKey{}).(*logSink); s.print(line) {
			return
		}
	}
	if onlyOpen().print(line) {
		return
	}
	log.Print("redis: " + line)
}

// sinkKey is the context key of the store's log.
type sinkKey struct{}

// sinkHook puts a store's log in the context of every command, pipeline
// and dial of the store's client, for router.
type sinkHook struct{ sink *logSink }

func (h sinkHook) ctx(ctx context.Context) context.Context {
	if s, _ := ctx.Value(sinkKey{}).(*logSink); s == h.sink {
		return ctx
	}
	return context.WithValue(ctx, sinkKey{}, h.sink)
}

// DialHook marks the dial's context.
func (h sinkHook) DialHook(next goredis.DialHook) goredis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		return next(h.ctx(ctx), network, addr)
	}
}

// ProcessHook marks the command's context.
func (h sinkHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		return next(h.ctx(ctx), cmd)
	}
}

// ProcessPipelineHook marks the pipeline's context.
func (h sinkHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []goredis.Cmder) error {
		return next(h.ctx(ctx), cmds)
	}
}

// ownedError is a dial error of one store's client: the same error, marked
// with the store's log so that go-redis's line about it goes there.
type ownedError struct {
	err  error
	sink *logSink
}

func (e *ownedError) Error() string { return e.err.Error() }
func (e *ownedError) Unwrap() error { return e.err }

// storeDialer dials as go-redis does (net.Dialer with timeout, TLS with
// conf when set), to mapAddr(addr) when mapAddr is not nil (tests put a
// proxy there), marking its errors with sink.
func storeDialer(timeout time.Duration, conf *tls.Config, mapAddr func(string) string, sink *logSink) func(context.Context, string, string) (net.Conn, error) {
	dial := goredis.NewDialer(&goredis.Options{DialTimeout: timeout, TLSConfig: conf})
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if mapAddr != nil {
			addr = mapAddr(addr)
		}
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, &ownedError{err: err, sink: sink}
		}
		return c, nil
	}
}
