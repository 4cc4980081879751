//go:build unix

package codec

import (
	"syscall"
	"time"
)

// cpuTime returns the CPU time (user and system) the process has used: on a
// machine shared with other work, CPU per operation varies far less than
// elapsed time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
