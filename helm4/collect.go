package helm4

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

// Collect removes the garbage s holds in its namespace (every namespace for
// the "" view), as helm3.Collect does for a Helm 3 Store: it is safe to run
// at any time, from any process, while others read and write, and does
// nothing on the backends that never leave garbage (SQL, Redis).
func Collect(ctx context.Context, s Store) error { return face.Collect(ctx, s) }

// Garbage counts what Collect would remove (see GarbageOf).
type Garbage = driver.Garbage

// GarbageOf reports what Collect would remove from s now, removing nothing:
// a dry run of Collect. It is zero on the backends that never leave garbage.
func GarbageOf(ctx context.Context, s Store) (Garbage, error) { return face.GarbageOf(ctx, s) }

// Verifier is implemented by every helmstore store: Verify (the function)
// calls it.
type Verifier = face.Verifier

// Verify reads every revision s holds in its namespace (every namespace
// for the "" view) as Get reads it (head, parts, digests, seals,
// decoding), calls bad with each that cannot be read, naming it (its Err
// wraps ErrCorrupt for damaged stored bytes), and returns how many
// revisions it read. Unlike List, which skips what it cannot read, it
// passes over no revision the store lists. The helmstore command's verify
// is this function.
func Verify(ctx context.Context, s Store, bad func(*ReleaseError)) (int, error) {
	return face.Verify(ctx, s, bad)
}
