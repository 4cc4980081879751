package sqlbackend_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/sqltest"
	"github.com/helmstore/helmstore/sql/sqlbackend"
)

// 32 writers create, update and delete releases of one namespace that share
// a chart and draw values and manifests from small pools, so their Updates
// add and drop references to the same parts in crossing orders. Writers
// lock in one global order, so the database reports no deadlock (each one
// a stall on PostgreSQL, and on MySQL an error once the retries run out),
// and afterwards every surviving release reads back as written and every
// part's reference count is what the surviving heads reference.
func TestWriteStormNoDeadlocks(t *testing.T) {
	const writers, ops, pool = 32, 40, 5
	sqlBackends(t, func(t *testing.T, s helm3.Store, b *sqlbackend.Backend) {
		st := s.Namespace("storm")
		type want struct{ values, manifest int }
		live := make([]map[string]want, writers)
		errs := make(chan error, writers*ops)
		var wg sync.WaitGroup
		for g := range writers {
			live[g] = map[string]want{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				rnd := rand.New(rand.NewPCG(uint64(g), 7))
				mine := live[g]
				var names []string
				n := 0
				for range ops {
					r := rnd.IntN(10)
					switch {
					case len(names) == 0 || r < 4:
						name := fmt.Sprintf("g%d-r%d", g, n)
						n++
						w := want{rnd.IntN(pool), rnd.IntN(pool)}
						if err := st.Create(sqltest.Key(name, 1), sqltest.SharedRelease(name, w.values, w.manifest)); err != nil {
							errs <- fmt.Errorf("create %s: %w", name, err)
							continue
						}
						mine[name] = w
						names = append(names, name)
					case r < 8:
						name := names[rnd.IntN(len(names))]
						w := want{rnd.IntN(pool), rnd.IntN(pool)}
						if err := st.Update(sqltest.Key(name, 1), sqltest.SharedRelease(name, w.values, w.manifest)); err != nil {
							errs <- fmt.Errorf("update %s: %w", name, err)
							continue
						}
						mine[name] = w
					default:
						i := rnd.IntN(len(names))
						name := names[i]
						if _, err := st.Delete(sqltest.Key(name, 1)); err != nil {
							errs <- fmt.Errorf("delete %s: %w", name, err)
							continue
						}
						delete(mine, name)
						names = append(names[:i], names[i+1:]...)
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		nerr := 0
		for err := range errs {
			nerr++
			if nerr <= 5 {
				t.Error(err)
			}
		}
		deadlocks := b.Deadlocks()
		t.Logf("%s: %d writers x %d ops: %d deadlocks, %d errors", b.Dialect().Name, writers, ops, deadlocks, nerr)
		if deadlocks != 0 || nerr != 0 {
			t.Errorf("%d deadlocks and %d errors; want none", deadlocks, nerr)
		}

		// Every surviving release reads back as last written.
		total := 0
		for g := range writers {
			for name, w := range live[g] {
				total++
				rls, err := st.Get(sqltest.Key(name, 1))
				if err != nil {
					t.Fatalf("get %s: %v", name, err)
				}
				exp := sqltest.SharedRelease(name, w.values, w.manifest)
				if !reflect.DeepEqual(rls.Config, exp.Config) || rls.Manifest != exp.Manifest {
					t.Fatalf("%s: got values %v manifest %q; want %v %q", name, rls.Config, rls.Manifest, exp.Config, exp.Manifest)
				}
			}
		}
		rs, err := st.List(func(*release.Release) bool { return true })
		if err != nil || len(rs) != total {
			t.Fatalf("list: %d releases, %v; want %d", len(rs), err, total)
		}

		// Parts: exactly those the heads reference, with those counts.
		ctx := context.Background()
		hs, err := b.Heads(ctx, driver.Query{Namespace: "storm"})
		if err != nil {
			t.Fatal(err)
		}
		refs := map[string]int{}
		kinds := map[string]int{}
		for _, h := range hs {
			for _, p := range h.Parts() {
				if refs[p.Digest.String()] == 0 {
					kinds[p.Kind.String()]++
				}
				refs[p.Digest.String()]++
			}
		}
		stats, err := st.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if stats.Releases != total || !reflect.DeepEqual(stats.Parts, kinds) {
			t.Fatalf("stats: %d releases, parts %v; the surviving heads (%d) reference %v", stats.Releases, stats.Parts, total, kinds)
		}
		stored, err := b.StoredRefs(ctx, "storm")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(stored, refs) {
			t.Fatalf("stored reference counts %v; the heads reference %v", stored, refs)
		}
		var chunkless int
		if err := b.DB().QueryRowContext(ctx, b.Dialect().Rebind("SELECT COUNT(*) FROM helmstore_parts p WHERE namespace = ? AND NOT EXISTS (SELECT 1 FROM helmstore_part_chunks c WHERE c.namespace = p.namespace AND c.digest = p.digest)"), "storm").Scan(&chunkless); err != nil {
			t.Fatal(err)
		}
		if chunkless != 0 {
			t.Fatalf("%d parts have no chunks", chunkless)
		}
	})
}
