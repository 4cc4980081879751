package sqlbackend_test

import (
	"encoding/json"
	"sort"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/releasecheck"
)

// TestColdReadsOneQuery checks, on PostgreSQL and MySQL, that a store with
// nothing cached (its part cache off, or empty) reads a release, a
// history, the deployed revision and a namespace's list in one query
// each: the heads and the chunks of their parts in one statement
// (Query.Frames); SQLite in two. A second read of a store with a cache,
// its parts now cached, reads the heads only. Every read returns the
// releases stored.
func TestColdReadsOneQuery(t *testing.T) {
	for _, c := range dialects {
		t.Run(c.name, func(t *testing.T) {
			conn := c.conn(t)
			const ns = "rt"
			w, _ := openStore(t, c.name, conn)
			var rs []*release.Release
			for v := 1; v <= 4; v++ {
				r := fixture.ValuesOnlyRelease("app", ns, v)
				if v < 4 {
					r.Info.Status = release.StatusSuperseded
				}
				if err := w.Namespace(ns).Create(driver.MakeKey("app", v), r); err != nil {
					t.Fatal(err)
				}
				rs = append(rs, r)
			}
			reads := []struct {
				what string
				read func(d helm3.Store) ([]*release.Release, error)
				want []*release.Release
			}{
				{"Get", func(d helm3.Store) ([]*release.Release, error) {
					r, err := d.Get(driver.MakeKey("app", 4))
					return []*release.Release{r}, err
				}, rs[3:]},
				{"History", func(d helm3.Store) ([]*release.Release, error) {
					return d.Query(map[string]string{"name": "app", "owner": "helm"})
				}, rs},
				{"Deployed", func(d helm3.Store) ([]*release.Release, error) {
					return d.Query(map[string]string{"name": "app", "owner": "helm", "status": "deployed"})
				}, rs[3:]},
				{"List", func(d helm3.Store) ([]*release.Release, error) {
					return d.List(func(*release.Release) bool { return true })
				}, rs},
			}
			for _, rd := range reads {
				for _, cache := range []bool{false, true} {
					var opts []helm3.Option
					if !cache {
						opts = append(opts, helm3.WithCacheBytes(0))
					}
					s, b := openStore(t, c.name, conn, opts...)
					times := 1
					if cache {
						times = 2
					}
					for i := 0; i < times; i++ {
						before := b.Queries()
						got, err := rd.read(s.Namespace(ns))
						if err != nil {
							t.Fatalf("%s: %v", rd.what, err)
						}
						// SQLite, in the process, reads heads and
						// parts in two statements (Dialect.InProcess).
						want := int64(1)
						if i == 0 && b.Dialect().InProcess {
							want = 2
						}
						if n := b.Queries() - before; n != want {
							t.Errorf("%s (cache %v, read %d) ran %d queries, want %d", rd.what, cache, i+1, n, want)
						}
						if g, w := encodeAll(t, got), encodeAll(t, rd.want); g != w {
							t.Errorf("%s (cache %v, read %d) returned other releases than were stored", rd.what, cache, i+1)
						}
					}
				}
			}
		})
	}
}

// encodeAll returns the normalized JSON of rs, sorted by version.
func encodeAll(t *testing.T, rs []*release.Release) string {
	rs = append([]*release.Release(nil), rs...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Version < rs[j].Version })
	b, err := json.Marshal(func() []*release.Release {
		out := make([]*release.Release, len(rs))
		for i, r := range rs {
			out[i] = releasecheck.Normalize(t, r)
		}
		return out
	}())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
