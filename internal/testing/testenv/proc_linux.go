//go:build linux

package testenv

import (
	"os/exec"
	"runtime"
	"sync"
	"syscall"
)

// detach makes cmd a process group leader that the kernel kills when the
// test process dies, so a crashed or timed-out test leaves no servers behind.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// The kernel sends a child its Pdeathsig when the thread that forked it
// exits, not the process, and Go ends a thread when a goroutine locked to
// it returns without unlocking (as some libraries do on purpose): a server
// started from such a thread would be killed in mid-test. Every child is
// therefore forked by one goroutine locked to its thread for the life of
// the process.
var (
	spawnOnce sync.Once
	spawns    chan spawn
)

type spawn struct {
	cmd  *exec.Cmd
	done chan error
}

// start starts cmd from the spawning thread.
func start(cmd *exec.Cmd) error {
	spawnOnce.Do(func() {
		spawns = make(chan spawn)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread outlives every child
			for s := range spawns {
				s.done <- s.cmd.Start()
			}
		}()
	})
	s := spawn{cmd, make(chan error, 1)}
	spawns <- s
	return <-s.done
}

// terminate signals cmd's process group: SIGTERM, or SIGKILL when kill.
func terminate(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	if err := syscall.Kill(-cmd.Process.Pid, sig); err != nil {
		cmd.Process.Signal(sig)
	}
}

// ProcessAlive reports whether a process with this pid exists.
func ProcessAlive(pid int) bool {
	return syscall.Kill(pid, 0) == nil || syscall.Kill(pid, 0) == syscall.EPERM
}
