//go:build !linux

package kubebuild

import "os/exec"

// dieWithParent is a no-op outside Linux.
func dieWithParent(cmd *exec.Cmd) {}
