package testenv

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections from a local address to target until Cut is
// called, which closes every connection and refuses new ones: a network
// failure on demand, in front of a real server.
type Proxy struct {
	Addr string

	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
}

// NewProxy starts a proxy to target, stopped when t ends.
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: l.Addr().String(), l: l}
	go p.serve(target)
	t.Cleanup(p.Cut)
	return p
}

func (p *Proxy) serve(target string) {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.cut {
			p.mu.Unlock()
			c.Close()
			s.Close()
			return
		}
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { io.Copy(s, c); s.Close() }()
		go func() { io.Copy(c, s); c.Close() }()
	}
}

// Cut closes every proxied connection and stops accepting new ones.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return
	}
	p.cut = true
	p.l.Close()
	for _, c := range p.conns {
		c.Close()
	}
}
