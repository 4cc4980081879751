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

// Proc is a server process started by the harness, logging to a file.
type Proc struct {
	name string
	cmd  *exec.Cmd
	log  string
	done chan struct{}
	err  error // set when done is closed
}

// StartProc starts path with args, its output going to dir/<name>.log.
func StartProc(dir, name, path string, args ...string) (*Proc, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = dir
	detach(cmd)
	if err := start(cmd); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &Proc{name: name, cmd: cmd, log: logPath, done: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		f.Close()
		close(p.done)
	}()
	return p, nil
}

// Exited reports whether the process has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// LogTail returns the end of the process's log, for error messages.
func (p *Proc) LogTail() string {
	b, _ := os.ReadFile(p.log)
	return Tail(b, 3000)
}

// Stop ends the process: SIGTERM, then SIGKILL after grace.
func (p *Proc) Stop(grace time.Duration) {
	if p == nil || p.Exited() {
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

// Kill ends the process at once (SIGKILL: a server saves nothing on the
// way out) and waits until it has exited.
func (p *Proc) Kill() {
	if p == nil || p.Exited() {
		return
	}
	terminate(p.cmd, true)
	<-p.done
}

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a moment
// ago.
func FreePorts(n int) ([]int, error) {
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

// WaitUntil polls ok every interval until it returns true, p exits, or d
// passes.
func WaitUntil(p *Proc, d time.Duration, ok func() bool) error {
	deadline := time.Now().Add(d)
	for {
		if ok() {
			return nil
		}
		if p != nil && p.Exited() {
			return fmt.Errorf("%s: %w (%v); log:\n%s", p.name, errExited, p.err, p.LogTail())
		}
		if time.Now().After(deadline) {
			msg := fmt.Sprintf("not ready after %s", d)
			if p != nil {
				msg = fmt.Sprintf("%s %s; log:\n%s", p.name, msg, p.LogTail())
			}
			return errors.New(msg)
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// LogFile returns the path of the process's log.
func (p *Proc) LogFile() string { return p.log }
