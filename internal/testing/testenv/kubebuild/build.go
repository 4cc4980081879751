package kubebuild

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/helmstore/helmstore/internal/filelock"
)

// ensure builds b's binaries into its cache directory unless they are
// there, and reports whether it built them.
func (b build) ensure(opts Options) (bool, error) {
	if b.have() {
		return false, nil
	}
	tick := opts.Tick
	if tick <= 0 {
		tick = time.Minute
	}
	say := func(format string, args ...any) {
		if opts.Progress != nil {
			fmt.Fprintf(opts.Progress, format+"\n", args...)
		}
	}
	root := filepath.Dir(b.dir)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Minute)
	defer cancel()
	unlock, err := b.lockReporting(ctx, tick, say)
	if err != nil {
		return false, fmt.Errorf("waiting for another process building %s: %w", b.what, err)
	}
	defer unlock()
	if b.have() { // built while we waited
		return false, nil
	}
	// Under the lock, a build directory of this key is what a killed
	// build left behind.
	stale, _ := filepath.Glob(b.dir + ".build-*")
	for _, d := range stale {
		os.RemoveAll(d)
	}
	tmp, err := os.MkdirTemp(root, filepath.Base(b.dir)+".build-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(tmp)
	goTool, err := exec.LookPath("go")
	if err != nil {
		return false, fmt.Errorf("the go command is needed to build %s but is not on PATH: install Go, or set %s to prebuilt binaries", b.what, b.env)
	}
	say("building %s %s from %s into %s: %s; much less with a warm Go build cache", b.what, b.version, b.src, b.dir, b.cold)
	start := time.Now()
	// One package is built to its binary's name (go build would name etcd's
	// after its module's last element, "server"); several into the directory.
	out := tmp + string(filepath.Separator)
	if len(b.packages) == 1 {
		out = filepath.Join(tmp, b.bins[0])
	}
	// -v lists each package as it is compiled: the progress lines count them.
	args := append([]string{"build", "-v", "-o", out, "-ldflags", b.ldflags}, b.packages...)
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = b.src
	cmd.Env = append(os.Environ(), "GOWORK=off", "CGO_ENABLED=0")
	output := &buildOutput{}
	cmd.Stdout, cmd.Stderr = output, output
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return false, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return false, fmt.Errorf("building %s in %s (go %s): %v\n%s",
					b.what, b.src, strings.Join(cmd.Args[1:], " "), err, output.errors(6000))
			}
			if err := os.Rename(tmp, b.dir); err != nil {
				return false, err
			}
			say("built %s in %s", b.what, time.Since(start).Round(time.Second))
			return true, nil
		case <-t.C:
			mods, pkgs := output.counts()
			downloads := ""
			if mods > 0 {
				downloads = fmt.Sprintf("%d modules downloaded, ", mods)
			}
			say("still building %s (%d min; %s%d packages compiled so far)", b.what, int(time.Since(start).Minutes()), downloads, pkgs)
		}
	}
}

// lockReporting takes b's build lock, saying so when another process holds
// it.
func (b build) lockReporting(ctx context.Context, tick time.Duration, say func(string, ...any)) (func(), error) {
	path := b.dir + ".lock"
	short, cancel := context.WithTimeout(ctx, time.Second)
	unlock, err := filelock.Lock(short, path)
	cancel()
	if err == nil {
		return unlock, nil
	}
	if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
		return nil, err
	}
	say("another process is building %s (lock %s); waiting for it", b.what, path)
	start := time.Now()
	for {
		short, cancel := context.WithTimeout(ctx, tick)
		unlock, err := filelock.Lock(short, path)
		cancel()
		if err == nil {
			say("the other build ended after %s of waiting", time.Since(start).Round(time.Second))
			return unlock, nil
		}
		if ctx.Err() != nil || !errors.Is(err, context.DeadlineExceeded) {
			return nil, err
		}
		say("still waiting for the other build of %s (%d min)", b.what, int(time.Since(start).Minutes()))
	}
}
