//go:build linux

package kubebuild

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when this process dies (a test
// timeout, Ctrl-C), so no orphaned build competes with the next one.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
