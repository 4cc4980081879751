package castest

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// Bounded runs fn and fails t if it took more than three times timeout
// (an operation's), or if the process allocated more than limit bytes
// meanwhile; it returns fn's error. what names the operation in a
// failure.
func Bounded(t testing.TB, what string, timeout time.Duration, limit uint64, fn func() error) error {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	err := fn()
	if d := time.Since(start); d > 3*timeout {
		t.Errorf("%s took %s, past 3 times its timeout of %s", what, d, timeout)
	}
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > limit {
		t.Errorf("%s allocated %d MiB: not bounded by what was written", what, n>>20)
	}
	return err
}

// CheckDamaged checks what the conformance suite checks of damage done
// behind a backend's back (a drivertest.Reshaper's), on s, a store opened
// for the check (no cache, operation timeout timeout) and scoped to the
// namespace of keys: that each release of keys that damaged names reads
// as ErrCorrupt naming it (or whole), and every other one whole; that List
// of the namespace and of all namespaces answer; and that each damaged
// release is deletable, and then not found. Each operation must be
// Bounded, allocating at most 256 MiB. what names the damage in a
// failure.
func CheckDamaged(t testing.TB, s helm3.Store, keys []string, damaged map[string]bool, timeout time.Duration, what string) {
	t.Helper()
	bound := func(op string, fn func() error) error {
		t.Helper()
		return Bounded(t, what+": "+op, timeout, 256<<20, fn)
	}
	for _, k := range keys {
		err := bound("get "+k, func() error { _, err := s.Get(k); return err })
		switch {
		case damaged[k] && err != nil && (!errors.Is(err, helm3.ErrCorrupt) || !strings.Contains(err.Error(), k)):
			t.Errorf("%s: get of damaged %s: %v, want ErrCorrupt naming it (or the release whole)", what, k, err)
		case !damaged[k] && err != nil:
			t.Errorf("%s: get of %s, which the damage does not touch: %v", what, k, err)
		}
	}
	for _, view := range []struct {
		name string
		s    helm3.Store
	}{{"list", s}, {"list of all namespaces", s.Namespace("")}} {
		if err := bound(view.name, func() error { _, err := view.s.List(func(*release.Release) bool { return true }); return err }); err != nil {
			t.Errorf("%s: %s: %v", what, view.name, err)
		}
	}
	for k := range damaged {
		if err := bound("delete "+k, func() error { _, err := s.Delete(k); return err }); err != nil && !errors.Is(err, helm3.ErrCorrupt) {
			t.Errorf("%s: delete of damaged %s: %v", what, k, err)
		}
		if _, err := s.Get(k); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Errorf("%s: get of %s after its delete: %v, want not found", what, k, err)
		}
	}
}

// SameStats reports whether two stores (or namespaces) hold the same:
// releases, parts of each kind, and part bytes.
func SameStats(a, b helm3.Stats) bool {
	if a.Releases != b.Releases || a.PartBytes != b.PartBytes || len(a.Parts) != len(b.Parts) {
		return false
	}
	for k, n := range a.Parts {
		if b.Parts[k] != n {
			return false
		}
	}
	return true
}
