//go:build !linux

package testenv

import (
	"os"
	"os/exec"
)

// detach is a no-op outside Linux: stop servers with Proc.Stop.
func detach(cmd *exec.Cmd) {}

// terminate asks cmd to stop, or kills it when kill.
func terminate(cmd *exec.Cmd, kill bool) {
	if kill || cmd.Process.Signal(os.Interrupt) != nil {
		cmd.Process.Kill()
	}
}

// ProcessAlive is conservative outside Linux: it never calls a directory
// stale.
func ProcessAlive(pid int) bool { return true }

// start starts cmd.
func start(cmd *exec.Cmd) error { return cmd.Start() }
