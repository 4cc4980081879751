package helm3

import (
	"context"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/internal/face"
)

// Collector is implemented by stores whose backend can leave garbage
// behind: objects that no release uses, left by a writer that died or lost
// the answers of its writes, which later writes do not all meet. Collect
// (the function) calls it.
type Collector = face.Collector

// Collect removes the garbage s holds in its namespace (every namespace
// for the "" view): what a writer that died, or lost the answers of its
// writes, left behind and no later write removed. On a store whose backend
// never leaves garbage (the SQL backends, Redis: every write is one
// transaction or script) it does nothing and returns nil.
//
// Collect never removes what a readable release uses or a write in flight
// may still use: it is safe to run at any time, from any process, while
// others read and write. It lists every object of the namespace, so it
// is for now and then, not for every operation: after a crash of a
// process that was writing, after writes failed with ErrUnavailable (a
// lost answer, a connection cut, a deadline), or on a schedule (daily,
// say). Garbage shows in Stats as parts no release uses. A release a dead
// writer left half created is committed if it is complete, else removed,
// once it is abandoned (for the backends without transactions, package
// cas documents when: at most the writer's operation timeout plus a clock
// skew margin after it started). The error of a backend that could not
// finish wraps what failed (ErrUnavailable, say); what it removed stays
// removed, and running it again goes on.
func Collect(ctx context.Context, s Store) error { return face.Collect(ctx, s) }

// Garbage counts what Collect would remove (see GarbageOf).
type Garbage = driver.Garbage

// GarbageOf reports what Collect would remove from s now, removing nothing:
// a dry run of Collect (the helmstore command's gc --dry-run). It is zero
// on the backends that never leave garbage.
func GarbageOf(ctx context.Context, s Store) (Garbage, error) { return face.GarbageOf(ctx, s) }

// Verifier is implemented by every helmstore store: Verify (the function)
// calls it.
type Verifier = face.Verifier

// Verify reads every revision s holds in its namespace (every namespace
// for the "" view) as Get reads it (head, parts, digests, seals,
// decoding), calls bad with each that cannot be read, naming it (its Err
// wraps ErrCorrupt for damaged stored bytes), and returns how many
// revisions it read. Unlike List, which skips what it cannot read, it
// passes over no revision the store lists.
func Verify(ctx context.Context, s Store, bad func(*ReleaseError)) (int, error) {
	return face.Verify(ctx, s, bad)
}
