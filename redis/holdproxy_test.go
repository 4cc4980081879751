package redis_test

import (
	"bytes"
	"net"
	"sync"
	"testing"

	"github.com/helmstore/helmstore/internal/testing/testenv"
)

// holdProxy forwards TCP connections to a Redis server. Armed, it watches
// for the first request naming one of some commands: it holds that
// request until released (hold), or reports when the server's reply to it
// has been forwarded (watch). So a test can order what a client does on
// several servers against what it does to them itself.
type holdProxy struct {
	*testenv.Proxy

	mu    sync.Mutex
	words [][]byte // the commands watched for, as RESP bulk strings
	hold  bool
	event chan struct{} // closed when the request is held (hold) or answered (watch)
	gate  chan struct{} // closed by release
}

func newHoldProxy(t *testing.T, target string) *holdProxy {
	t.Helper()
	p := &holdProxy{}
	p.Proxy = testenv.NewProxyWith(t, target, func(c, s net.Conn) {
		answered := make(chan chan struct{}, 1)
		go p.requests(c, s, answered)
		go p.replies(s, c, answered)
	})
	// Cleanups run last first: a held request is let go before the
	// proxy's own cleanup cuts its connections.
	t.Cleanup(p.release)
	return p
}

// arm watches for the first request naming one of commands (lower case),
// holding it until release when hold is set. The channel returned is
// closed when that request is held, or when its reply has been forwarded.
func (p *holdProxy) arm(hold bool, commands ...string) <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.words = nil
	for _, c := range commands {
		p.words = append(p.words, []byte("\r\n"+c+"\r\n"))
	}
	p.hold, p.event, p.gate = hold, make(chan struct{}), make(chan struct{})
	return p.event
}

// release lets the held request go (and any held after it).
func (p *holdProxy) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.gate != nil {
		close(p.gate)
		p.gate = nil
	}
}

// match reports whether chunk is the first armed request, and disarms.
func (p *holdProxy) match(chunk []byte) (hold bool, event, gate chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.words == nil {
		return false, nil, nil
	}
	low := bytes.ToLower(chunk)
	for _, w := range p.words {
		if bytes.Contains(low, w) {
			p.words = nil
			return p.hold, p.event, p.gate
		}
	}
	return false, nil, nil
}

func (p *holdProxy) requests(c, s net.Conn, answered chan<- chan struct{}) {
	defer s.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		if n > 0 {
			hold, event, gate := p.match(buf[:n])
			switch {
			case event != nil && hold:
				close(event)
				<-gate
			case event != nil:
				answered <- event
			}
			if _, err := s.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *holdProxy) replies(s, c net.Conn, answered <-chan chan struct{}) {
	defer c.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
			select {
			case event := <-answered:
				close(event)
			default:
			}
		}
		if err != nil {
			return
		}
	}
}
