package testenv

import (
	"io"
	"net"
	"sync"
	"testing"
)

// Proxy forwards TCP connections from a local address to target until Cut is
// called, which closes every connection and refuses new ones: a network
// failure on demand, in front of a real server. A proxy made with
// NewLossyProxy can also lose one reply (see ReplyLoss); one made with
// NewProxyWith forwards as its caller says.
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
	return NewLossyProxy(t, target, nil)
}

// NewLossyProxy starts a proxy to target, stopped when t ends, that loses a
// reply when loss says so. Several proxies (one per address a client dials)
// may share one ReplyLoss: its count runs over all their connections.
func NewLossyProxy(t testing.TB, target string, loss *ReplyLoss) *Proxy {
	t.Helper()
	return NewProxyWith(t, target, func(client, server net.Conn) {
		pc := &proxiedConn{client: client, server: server, loss: loss, replied: true}
		go pc.requests()
		go pc.replies()
	})
}

// NewProxyWith starts a proxy to target, stopped when t ends, that hands
// each connection it accepts, with its own connection to target, to
// forward. Forward returns at once, leaving goroutines of its own to copy
// between the two (and watch or hold what passes) until either is closed;
// the proxy closes both on Cut.
func NewProxyWith(t testing.TB, target string, forward func(client, server net.Conn)) *Proxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{Addr: l.Addr().String(), l: l}
	go p.serve(target, forward)
	t.Cleanup(p.Cut)
	return p
}

func (p *Proxy) serve(target string, forward func(client, server net.Conn)) {
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
		forward(c, s)
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

// ReplyLoss is a fault that proxies sharing it apply to their connections:
// once armed with Arm(k), the k-th message that clients send (over every
// connection of every proxy that shares it) is forwarded to the server, and
// the first bytes the server sends back on that connection, its reply, are
// dropped and the connection closed at both ends. The server so applies the
// request and the client never learns it did: a reply lost after the write,
// as a timeout, a reset or a failover loses it.
//
// A message is what a client sends between two of the server's replies: the
// proxy knows no protocol, so a request written in several pieces is one
// message, and requests a client pipelines before any reply are one too.
// The zero value is disarmed.
//
// With Hold set, the lost reply's connection is not closed: the proxy stops
// forwarding anything on it (in either direction) and keeps it open until
// the client closes it, so the client learns nothing until its own deadline
// passes, as with a reply lost on a path that stops answering.
type ReplyLoss struct {
	// Hold keeps the connection of the lost reply open, silent, instead of
	// closing it.
	Hold bool

	mu    sync.Mutex
	armed bool
	left  int  // messages still to forward before the one whose reply is lost
	fired bool // a reply was dropped since Arm
}

// Arm makes the k-th message from now (k >= 1) lose its reply.
func (l *ReplyLoss) Arm(k int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed, l.left, l.fired = true, k, false
}

// Disarm stops counting and reports whether a reply was dropped since Arm.
func (l *ReplyLoss) Disarm() (fired bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = false
	return l.fired
}

// message counts a new message and reports whether it is the one whose
// reply must be lost.
func (l *ReplyLoss) message() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.armed {
		return false
	}
	l.left--
	if l.left > 0 {
		return false
	}
	l.armed = false
	return true
}

// dropped records a reply lost.
func (l *ReplyLoss) dropped() {
	l.mu.Lock()
	l.fired = true
	l.mu.Unlock()
}

// proxiedConn is one client connection and its connection to the server.
type proxiedConn struct {
	client, server net.Conn
	loss           *ReplyLoss

	mu sync.Mutex
	// replied: the server has sent something since the client last did
	// (or the connection is new), so the client's next bytes start a
	// message.
	replied bool
	// victim: the reply to what the client sent last must be lost.
	victim bool
	// held: a held reply was lost; nothing more is forwarded.
	held bool
}

// requests copies what the client sends to the server, counting messages.
func (c *proxiedConn) requests() {
	defer c.server.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.client.Read(buf)
		if n > 0 {
			if c.loss != nil {
				c.mu.Lock()
				if c.replied && c.loss.message() {
					c.victim = true
				}
				c.replied = false
				held := c.held
				c.mu.Unlock()
				if held {
					continue
				}
			}
			if _, werr := c.server.Write(buf[:n]); werr != nil {
				c.client.Close()
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// replies copies what the server sends to the client, but drops the reply
// to a victim message and closes both connections.
func (c *proxiedConn) replies() {
	defer c.client.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := c.server.Read(buf)
		if n > 0 {
			c.mu.Lock()
			victim := c.victim
			c.replied = true
			c.mu.Unlock()
			if victim {
				c.loss.dropped()
				if c.loss.Hold {
					// Silent until the client gives up: then requests()
					// sees its close and closes the server's side.
					c.mu.Lock()
					c.held = true
					c.mu.Unlock()
					io.Copy(io.Discard, c.server)
					return
				}
				c.server.Close()
				return
			}
			if _, werr := c.client.Write(buf[:n]); werr != nil {
				c.server.Close()
				return
			}
		}
		if err != nil {
			return
		}
	}
}
