//go:build unix

// Package filelock takes exclusive advisory locks on files, so that two
// processes do not migrate one database or build one binary at once.
package filelock

import (
	"context"
	"os"
	"syscall"
	"time"
)

// Lock takes an exclusive advisory lock on path (created if needed),
// waiting until ctx is done.
func Lock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
		}
		if err != syscall.EWOULDBLOCK {
			f.Close()
			return nil, err
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
