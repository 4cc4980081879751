package helm4

import "context"

// Collector is implemented by stores whose backend can leave garbage
// behind: objects that no release uses, left by a writer that died or lost
// the answers of its writes, which later writes do not all meet. Collect
// (the function) calls it.
type Collector interface {
	// Collect removes the garbage of the store's namespace (every
	// namespace for the "" view), within ctx.
	Collect(ctx context.Context) error
}

// Collect removes the garbage s holds in its namespace (every namespace for
// the "" view), as helm3.Collect does for a Helm 3 Store: it is safe to run
// at any time, from any process, while others read and write, and does
// nothing on the backends that never leave garbage (SQL, Redis).
func Collect(ctx context.Context, s Store) error {
	if c, ok := s.(Collector); ok {
		return c.Collect(ctx)
	}
	return nil
}
