package cas

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/helmstore/helmstore/driver"
)

// background tracks the work a store runs on after the operation that
// started it has returned (the commit of a Create), by release: an
// operation on the release waits for its tasks, until its own deadline;
// Close waits for all of them, until Config.CloseTimeout, then stops them.
// Each task runs on its own context, bounded by Config.CleanupTimeout and
// ended by stop.
type background struct {
	ctx  context.Context // parent of every task's context
	stop context.CancelCauseFunc

	mu      sync.Mutex
	running map[*task]struct{}
}

// task is one piece of background work on a release.
type task struct {
	// what it is ("commit", ...), and what is left for later when Close
	// stops it, for the log.
	what, left string
	ns, key    string
	done       chan struct{} // closed once it returned
	err        error         // its error, set before done is closed
}

// errClosed is the cause of the contexts of the tasks Close stopped.
var errClosed = errors.New("the store was closed")

func newBackground() *background {
	g := &background{running: map[*task]struct{}{}}
	g.ctx, g.stop = context.WithCancelCause(context.Background())
	return g
}

// start runs fn on a context bounded by timeout (and ended by stop) as a
// task of release ns/key.
func (g *background) start(what, left, ns, key string, timeout time.Duration, fn func(ctx context.Context) error) *task {
	t := &task{what: what, left: left, ns: ns, key: key, done: make(chan struct{})}
	g.mu.Lock()
	g.running[t] = struct{}{}
	g.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(g.ctx, timeout)
		defer cancel()
		t.err = fn(ctx)
		g.mu.Lock()
		delete(g.running, t)
		g.mu.Unlock()
		close(t.done)
	}()
	return t
}

// tasks returns the tasks running, of release ns/key only if key is not
// "".
func (g *background) tasks(ns, key string) []*task {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*task
	for t := range g.running {
		if key == "" || t.ns == ns && t.key == key {
			out = append(out, t)
		}
	}
	return out
}

// wait returns once no task of release ns/key is running, or, if ctx ends
// first, an error wrapping driver.ErrUnavailable (the store could not
// finish the release's earlier write in time: the operation did nothing).
func (g *background) wait(ctx context.Context, ns, key string) error {
	for _, t := range g.tasks(ns, key) {
		if _, err := t.wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

// wait returns t's error once it returned; an error wrapping
// driver.ErrUnavailable if ctx ends first.
func (t *task) wait(ctx context.Context) (taskErr, err error) {
	select {
	case <-t.done:
		return t.err, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: the %s of release %q in namespace %q, which this store runs in the background, did not finish within the operation's deadline (%w)",
			driver.ErrUnavailable, t.what, t.key, t.ns, ctx.Err())
	}
}

// waitAll returns once no task is running (d < 0), or after d at most:
// then it returns the tasks still running.
func (g *background) waitAll(d time.Duration) []*task {
	var timeout <-chan time.Time
	if d >= 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		timeout = timer.C
	}
	for {
		running := g.tasks("", "")
		if len(running) == 0 {
			return nil
		}
		for _, t := range running {
			select {
			case <-t.done:
			case <-timeout:
				return g.tasks("", "")
			}
		}
	}
}

// stopped reports whether ctx, a task's, was ended by Close.
func stopped(ctx context.Context) bool { return errors.Is(context.Cause(ctx), errClosed) }
