package testenv

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// proc is a server process started by the harness, logging to a file.
type proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // set when done is closed
}

// startProc starts path with args, its output going to dir/<name>.log.
func startProc(dir, name, path string, args ...string) (*proc, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = dir
	detach(cmd)
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// logTail returns the end of the process's log, for error messages.
func (p *proc) logTail() string {
	b, _ := os.ReadFile(p.log)
	return tail(b, 3000)
}

// stop ends the process: SIGTERM, then SIGKILL after grace.
func (p *proc) stop(grace time.Duration) {
	if p == nil || p.exited() {
		return
	}
	terminate(p.cmd, false)
	select {
	case <-p.done:
	case <-time.After(grace):
		terminate(p.cmd, true)
		<-p.done
	}
}

// kill ends the process at once (SIGKILL: a server saves nothing on the
// way out) and waits until it has exited.
func (p *proc) kill() {
	if p == nil || p.exited() {
		return
	}
	terminate(p.cmd, true)
	<-p.done
}

// freePorts returns n distinct TCP ports on 127.0.0.1 that were free a moment
// ago.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	out := make([]int, 0, n)
	for len(out) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}

var errExited = errors.New("process exited")

// waitUntil polls ok every interval until it returns true, p exits, or d
// passes.
func waitUntil(p *proc, d time.Duration, ok func() bool) error {
	deadline := time.Now().Add(d)
	for {
		if ok() {
			return nil
		}
		if p != nil && p.exited() {
			return fmt.Errorf("%s: %w (%v); log:\n%s", p.name, errExited, p.err, p.logTail())
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("not ready after %s", d)
			if p != nil {
				msg = fmt.Sprintf("%s %s; log:\n%s", p.name, msg, p.logTail())
			}
			return errors.New(msg)
		}
		time.Sleep(150 * time.Millisecond)
	}
}
