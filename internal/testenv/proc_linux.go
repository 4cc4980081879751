//go:build linux

package testenv

import (
	"os/exec"
	"syscall"
)

// detach makes cmd a process group leader that the kernel kills when the
// test process dies, so a crashed or timed-out test leaves no servers behind.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
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
