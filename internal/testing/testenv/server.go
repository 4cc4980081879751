package testenv

import (
	"fmt"
	"net"
	"strconv"
	"time"
)

// portAttempts is how many free ports StartOnFreePort tries: a port chosen
// free may be taken by another process before the server binds it.
const portAttempts = 3

// StartServer starts bin with args in dir (its output in dir/<name>.log)
// and waits, up to d, until ready reports true (nil ready: until addr
// accepts TCP connections). A server that exits first or never gets ready
// is stopped, and the error quotes the end of its log.
func StartServer(dir, name, bin string, args []string, addr string, d time.Duration, ready func() bool) (*Proc, error) {
	if ready == nil {
		ready = func() bool { return Reachable(addr) }
	}
	p, err := StartProc(dir, name, bin, args...)
	if err != nil {
		return nil, err
	}
	if err := WaitUntil(p, d, ready); err != nil {
		p.Kill()
		return nil, fmt.Errorf("started %s on %s: %w", bin, addr, err)
	}
	return p, nil
}

// StartOnFreePort starts a server (as StartServer does, ready when it
// accepts TCP connections) on a free port of 127.0.0.1, args(port) being its
// arguments, trying another port when it fails. It returns the process and
// its address.
func StartOnFreePort(dir, name, bin string, args func(port int) []string, d time.Duration) (*Proc, string, error) {
	var last error
	for attempt := 0; attempt < portAttempts; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, "", err
		}
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		p, err := StartServer(dir, name, bin, args(port), addr, d, nil)
		if err == nil {
			return p, addr, nil
		}
		last = err
	}
	return nil, "", last
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
