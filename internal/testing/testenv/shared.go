package testenv

import (
	"sync"
	"testing"
)

// Shared is a service the tests of one process share: found or started by
// the first test that asks for it, its value (or the reason there is none)
// kept for the others.
type Shared[T any] struct {
	once sync.Once
	v    T
	err  error
}

// Get returns the service, calling find on the first call only. When there
// is none it ends t as Unavailable does (a skip, or a failure under
// HELMSTORE_REQUIRE_SERVICES=1), naming it service.
func (s *Shared[T]) Get(t testing.TB, service string, find func() (T, error)) T {
	t.Helper()
	s.once.Do(func() { s.v, s.err = find() })
	if s.err != nil {
		Unavailable(t, service, s.err)
	}
	return s.v
}
