package redis

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log"
	"net"
	"os"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// go-redis logs through one logger for the whole process (redis.SetLogger),
// and most of its lines (a pool's "failed to dial after N attempts", a
// Cluster's "all nodes are marked as failed") come from its own goroutines,
// with no context of the operation that caused them. So that each store's
// lines go to that store's log (driver.Config.Log), this package installs a
// logger that routes them:
//
//   - a line about a dial error goes to the store whose dialer failed: every
//     store dials through its own dialer (storeDialer), which marks its
//     errors with the store (ownedError; the text is go-redis's own);
//   - any other line goes to the log of every open store of this package
//     (it cannot be told apart), or, when none is open, to the standard
//     error as go-redis would have printed it.
//
// A program that calls redis.SetLogger itself after importing this package
// replaces the routing, and its stores' go-redis lines go where it says.

func init() {
	goredis.SetLogger(router{})
}

// logSink is one open store's log.
type logSink struct {
	log func(format string, v ...interface{})
}

var (
	sinksMu sync.Mutex
	sinks   = map[*logSink]bool{}
	// stderr prints go-redis's lines when no store is open.
	stderr = log.New(os.Stderr, "redis: ", log.LstdFlags)
)

func (s *logSink) open() {
	sinksMu.Lock()
	sinks[s] = true
	sinksMu.Unlock()
}

func (s *logSink) close() {
	sinksMu.Lock()
	delete(sinks, s)
	sinksMu.Unlock()
}

// router is the go-redis logger of the process.
type router struct{}

// Printf sends one go-redis line where it belongs.
func (router) Printf(_ context.Context, format string, v ...interface{}) {
	line := fmt.Sprintf(format, v...)
	for _, a := range v {
		var o *ownedError
		if err, ok := a.(error); ok && errors.As(err, &o) {
			o.sink.log("helmstore: redis: go-redis: %s", line)
			return
		}
	}
	sinksMu.Lock()
	open := make([]*logSink, 0, len(sinks))
	for s := range sinks {
		open = append(open, s)
	}
	sinksMu.Unlock()
	if len(open) == 0 {
		stderr.Print(line)
		return
	}
	for _, s := range open {
		s.log("helmstore: redis: go-redis: %s", line)
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
