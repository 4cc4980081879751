package testenv

import (
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Blackhole forwards TCP connections from a local address to target until
// Hole is called. From then on it forwards nothing in either direction but
// closes nothing: it keeps reading (and dropping) what clients send, and
// accepts new connections that lead nowhere. That is how a dead network path
// looks to a client (a silently dropped route, a crashed host, a firewall
// that drops packets): no reset, no close, no answer.
type Blackhole struct {
	Addr string

	l      net.Listener
	holed  atomic.Bool
	mu     sync.Mutex
	conns  []net.Conn
	closed bool
}

// NewBlackhole starts a blackhole proxy to target, closed when t ends.
func NewBlackhole(t testing.TB, target string) *Blackhole {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &Blackhole{Addr: l.Addr().String(), l: l}
	go b.serve(target)
	t.Cleanup(b.close)
	return b
}

// Hole stops forwarding, keeping every connection open.
func (b *Blackhole) Hole() { b.holed.Store(true) }

func (b *Blackhole) track(cs ...net.Conn) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		for _, c := range cs {
			c.Close()
		}
		return false
	}
	b.conns = append(b.conns, cs...)
	return true
}

func (b *Blackhole) serve(target string) {
	for {
		c, err := b.l.Accept()
		if err != nil {
			return
		}
		if b.holed.Load() {
			if b.track(c) {
				go b.pipe(c, nil)
			}
			continue
		}
		s, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		if !b.track(c, s) {
			return
		}
		go b.pipe(c, s)
		go b.pipe(s, c)
	}
}

// pipe copies src to dst (nil: nowhere) until src fails, dropping what it
// reads once the hole is open; only a failed src closes dst.
func (b *Blackhole) pipe(src, dst net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && dst != nil && !b.holed.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			if dst != nil && !b.holed.Load() {
				dst.Close()
			}
			return
		}
	}
}

func (b *Blackhole) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.closed = true
	b.l.Close()
	for _, c := range b.conns {
		c.Close()
	}
}
