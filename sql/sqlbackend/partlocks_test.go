package sqlbackend_test

import (
	"context"
	stdsql "database/sql"
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// TestWritesLockOnlyTheirParts checks, on the servers with row locks, the
// lock discipline that keeps concurrent writers from deadlocking (which
// TestWriteStormNoDeadlocks catches only now and then): a write holds the
// locks of the part rows whose reference counts it changes, and of no
// other part. Just before each write commits (SetBeforeCommit), another
// connection tries to lock every part row of the namespace without
// waiting (NOWAIT); the rows it cannot lock must be exactly those the write
// changed. Then the same write runs again while another transaction holds
// the row of each other part in turn: it must not wait for it (a write that
// did would fail at the store's timeout, the lock being held until it
// ends). A write that locked other parts' rows, even for a moment (MariaDB
// ran the read-back of a Create's upsert, SELECT ... FOR UPDATE, as a scan
// of the namespace's part rows, locking each until it saw it did not
// match), waits for rows in no order while holding its own, and deadlocks.
func TestWritesLockOnlyTheirParts(t *testing.T) {
	sqlBackends(t, func(t *testing.T, s helm3.Store, b *sqlbackend.Backend) {
		if b.Dialect().Name == "sqlite" {
			t.Skip("sqlite has no row locks: one writer at a time")
		}
		ctx := context.Background()
		st := s.Namespace("storm")
		// Parts of every pick, so that other parts' rows lie between a
		// release's own.
		for v := range 5 {
			name := fmt.Sprintf("seed%d", v)
			if err := st.Create(sqltest.Key(name, 1), sqltest.SharedRelease(name, v, v)); err != nil {
				t.Fatal(err)
			}
		}
		// check runs write and compares the part rows it held just before
		// committing with those whose counts it changed.
		check := func(what string, write func() error) (changed map[string]bool) {
			t.Helper()
			before, err := b.StoredRefs(ctx, "storm")
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var held map[string]bool
			b.SetBeforeCommit(func(ctx context.Context, _ *stdsql.Tx, _ int) error {
				h := map[string]bool{}
				for d := range before {
					if !lockableNow(t, b, d) {
						h[d] = true
					}
				}
				mu.Lock()
				held = h
				mu.Unlock()
				return nil
			})
			err = write()
			b.SetBeforeCommit(nil)
			if err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			after, err := b.StoredRefs(ctx, "storm")
			if err != nil {
				t.Fatal(err)
			}
			changed = map[string]bool{}
			for d, n := range before { // rows a write can lock: those that existed
				if m, ok := after[d]; !ok || m != n {
					changed[d] = true
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if !maps.Equal(held, changed) {
				t.Errorf("%s held the part rows %v, want those whose counts it changed, %v", what, short(held), short(changed))
			}
			return changed
		}
		// unblocked runs write (again) while another transaction holds
		// the row of other, a part it does not change.
		n := 0
		unblocked := func(what, other string, prepare, write func(name string) error) {
			t.Helper()
			n++
			name := fmt.Sprintf("again%d", n)
			if err := prepare(name); err != nil {
				t.Fatal(err)
			}
			tx, err := b.BeginTx(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if err := lockPart(ctx, b, tx, other, ""); err != nil {
				t.Fatal(err)
			}
			if err := write(name); err != nil {
				t.Errorf("%s, with part %.8s (which it does not change) locked by another transaction: %v", what, other, err)
			}
		}
		others := func(changed map[string]bool) []string {
			all, err := b.StoredRefs(ctx, "storm")
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for d := range all {
				if !changed[d] {
					out = append(out, d)
				}
			}
			slices.Sort(out)
			return out
		}
		for i, p := range [][2]int{{0, 1}, {2, 4}, {3, 0}, {4, 2}, {1, 3}} {
			name := fmt.Sprintf("r%d", i)
			create := func(name string) error {
				return st.Create(sqltest.Key(name, 1), sqltest.SharedRelease(name, p[0], p[1]))
			}
			update := func(name string) error {
				return st.Update(sqltest.Key(name, 1), sqltest.SharedRelease(name, p[1], (p[0]+2)%5))
			}
			changed := check("Create "+name, func() error { return create(name) })
			for _, o := range others(changed) {
				unblocked("Create", o, func(string) error { return nil }, create)
			}
			changed = check("Update "+name, func() error { return update(name) })
			for _, o := range others(changed) {
				unblocked("Update", o, create, update)
			}
		}
		for i := range 5 {
			name := fmt.Sprintf("r%d", i)
			check("Delete "+name, func() error { _, err := st.Delete(sqltest.Key(name, 1)); return err })
		}
	}, helm3.WithTimeout(20*time.Second))
}

// lockableNow reports whether the row of part d in namespace storm can be
// locked at once, from a transaction of its own.
func lockableNow(t *testing.T, b *sqlbackend.Backend, d string) bool {
	t.Helper()
	ctx := context.Background()
	tx, err := b.BeginTx(ctx)
	if err != nil {
		t.Error(err)
		return false
	}
	defer tx.Rollback()
	return lockPart(ctx, b, tx, d, " NOWAIT") == nil
}

// lockPart locks the row of part d in namespace storm in tx (FOR UPDATE,
// then how: "" to wait, " NOWAIT" to fail at once if it is locked).
func lockPart(ctx context.Context, b *sqlbackend.Backend, tx *stdsql.Tx, d, how string) error {
	_, err := b.ExecTx(ctx, tx, "SELECT refs FROM helmstore_parts WHERE namespace = ? AND digest = ? FOR UPDATE"+how, "storm", d)
	return err
}

// short lists the digests of set, shortened, in order.
func short(set map[string]bool) []string {
	var out []string
	for d := range set {
		out = append(out, d[:8])
	}
	slices.Sort(out)
	return out
}
