//go:build unix

// Package filelock takes exclusive advisory locks on files, so that two
// processes do not migrate one database or build one binary at once.
package filelock

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// Lock takes an exclusive advisory lock on path (created if needed),
// waiting until ctx is done.
func Lock(ctx context.Context, path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if errors.Is(err, fs.ErrPermission) {
		// flock needs no write access: a lock file another user made and
		// left readable still serves.
		if rf, rerr := os.Open(path); rerr == nil {
			f, err = rf, nil
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrPermission) {
			return nil, fmt.Errorf("%w (the lock file belongs to another user, perhaps from a run as root: remove it, or give it the owner of the file it guards)", err)
		}
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

// LockLike is Lock for a lock file that guards the file like: the lock file
// gets like's owner, group and read/write permission bits, so that whoever
// may open like may take the lock too — a run as root does not leave behind
// a lock file that only root can open. An existing lock file is given them
// too where this process may (as its owner, or as root). Nothing is changed
// when like does not exist.
func LockLike(ctx context.Context, path, like string) (func(), error) {
	if err := matchFile(path, like); err != nil {
		return nil, err
	}
	return Lock(ctx, path)
}

func matchFile(path, like string) error {
	want, err := os.Stat(like)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	mode := want.Mode().Perm() &^ 0o111
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, mode)
	if errors.Is(err, fs.ErrPermission) {
		return nil // Lock opens it read-only or explains
	}
	if err != nil {
		return err
	}
	defer f.Close()
	have, err := f.Stat()
	if err != nil {
		return err
	}
	ws, ok1 := want.Sys().(*syscall.Stat_t)
	hs, ok2 := have.Sys().(*syscall.Stat_t)
	if ok1 && ok2 && os.Geteuid() == 0 && (ws.Uid != hs.Uid || ws.Gid != hs.Gid) {
		if err := f.Chown(int(ws.Uid), int(ws.Gid)); err != nil {
			return err
		}
	}
	if have.Mode().Perm() != mode {
		// Best effort: only the owner or root may; the lock works without.
		_ = f.Chmod(mode)
	}
	return nil
}
