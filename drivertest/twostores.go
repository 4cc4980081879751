package drivertest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// twoStoresOps is the number of operations of the TwoStores test
// (HELMSTORE_TWOSTORES_OPS overrides), and twoStoresEvery how often it
// checks everything stored.
const (
	twoStoresOps   = 1000
	twoStoresEvery = 50
)

// twoStoresGen draws the releases of the TwoStores test from small pools of
// charts, values and manifests, so that releases share parts, and makes
// values and manifests of their own now and then, so that parts come and
// go as releases are created, updated and deleted.
type twoStoresGen struct {
	r         *rand.Rand
	charts    []*chart.Chart
	values    []map[string]interface{}
	manifests []string
}

func newTwoStoresGen(seed uint64) *twoStoresGen {
	g := &twoStoresGen{r: rand.New(rand.NewPCG(seed, 10))}
	for i := range 3 {
		g.charts = append(g.charts, testChart("demo", fmt.Sprintf("0.%d.0", i)))
	}
	for i := range 4 {
		g.values = append(g.values, map[string]interface{}{"pick": float64(i)})
		g.manifests = append(g.manifests, fmt.Sprintf("kind: ConfigMap # %d\n", i))
	}
	return g
}

// release returns revision v of name in ns with parts drawn from the pools
// (or, with like, the parts of like: a rollback).
func (g *twoStoresGen) release(ns, name string, v int, like *release.Release) *release.Release {
	r := rel(name, ns, v, diffStatuses[g.r.IntN(len(diffStatuses))])
	if like != nil {
		r.Chart, r.Config, r.Manifest = like.Chart, like.Config, like.Manifest
	} else {
		// Shared parts, or now and then parts of the revision's own,
		// which its write must create and its removal collect.
		// (Charts are never embedded in a head and never deltas: a chart
		// of its own is a part object on every backend.)
		r.Chart = g.charts[g.r.IntN(len(g.charts))]
		if g.r.IntN(3) == 0 {
			r.Chart = testChart("own", fmt.Sprintf("1.%d.0", g.r.Uint32()))
		}
		r.Config = g.values[g.r.IntN(len(g.values))]
		if g.r.IntN(3) == 0 {
			r.Config = map[string]interface{}{"own": float64(g.r.Uint32())}
		}
		r.Manifest = g.manifests[g.r.IntN(len(g.manifests))]
		if g.r.IntN(2) == 0 {
			r.Manifest = fmt.Sprintf("kind: ConfigMap # %s %d %d\n", name, v, g.r.Uint32())
		}
	}
	r.Info.Description = fmt.Sprintf("op %d", g.r.IntN(1000))
	return r
}

// testTwoStores runs seeded random writes alternating between two stores
// over one set of data, one of them now and then closed and opened again,
// and checks every answer against Helm's Memory driver, and, every
// twoStoresEvery operations and at the end, that a fresh store holds
// exactly the releases Memory holds and exactly the parts they reference
// (Stats, by kind): the stores without transactions must not leak a part
// or lose one when another store's writes race theirs or its view of the
// data is stale.
func testTwoStores(t *testing.T, h Harness) {
	orig := h.open(t)
	reopen := func() helm3.Store {
		if h.Reopen == nil {
			t.Skip("Harness.Reopen is not set: the driver cannot be checked with several stores over one set of data")
		}
		return h.Reopen(t, orig)
	}
	stores := [2]helm3.Store{reopen(), reopen()}
	defer func() {
		for _, s := range stores {
			s.Close()
		}
	}()
	mem := h.newMemory()
	seed := h.seed()
	g := newTwoStoresGen(seed)
	n := twoStoresOps
	if v, err := strconv.Atoi(os.Getenv("HELMSTORE_TWOSTORES_OPS")); err == nil && v > 0 {
		n = v
	}
	nss, names := []string{"default", "team-a"}, []string{"web", "db", "cache"}
	everything := func(*release.Release) bool { return true }
	// revisions returns the versions Memory holds of ns/name, sorted.
	revisions := func(ns, name string) []*release.Release {
		rs, _ := mem.Namespace(ns).Query(map[string]string{"name": name, "owner": "helm"})
		sort.Slice(rs, func(i, j int) bool { return rs[i].Version < rs[j].Version })
		return rs
	}
	check := func(i int) {
		t.Helper()
		fresh := h.reopen(t, orig, helm3.WithCacheBytes(0))
		got, err := fresh.Namespace("").List(everything)
		if err != nil {
			t.Fatalf("seed %d after op %d: a fresh store's List: %v", seed, i, err)
		}
		want, _ := mem.Namespace("").List(everything)
		if a, b := canon(t, got), canon(t, want); !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d after op %d: a fresh store's releases differ from Helm's Memory driver's\n%s", seed, i, lineDiff(a, b))
		}
		wantStats(t, fmt.Sprintf("seed %d after op %d", seed, i), fresh.Namespace(""), want)
		fresh.Close()
	}
	reopened := 0
	last := map[string]int{}    // the last revision created, by namespace/name
	deleted := map[string]int{} // the last revision deleted, by namespace/name
	for i := 0; i < n; i++ {
		which := i % 2
		ns, name := nss[g.r.IntN(len(nss))], names[g.r.IntN(len(names))]
		ours, oracle := stores[which].Namespace(ns), mem.Namespace(ns)
		revs := revisions(ns, name)
		// Revisions are numbered as Helm numbers them, one more than the
		// last ever written, so a revision deleted stays deleted.
		next := last[ns+"/"+name] + 1
		// existing picks a revision to update, delete or get, among all
		// ever written and the next: often one deleted before (as often
		// by the other store, which this one may have read or written
		// before it went) or one never written.
		existing := func() int { return 1 + g.r.IntN(next) }
		var desc string
		var gotErr, wantErr error
		var got, want *release.Release
		switch op := g.r.IntN(100); {
		case op < 25:
			r := g.release(ns, name, next, nil)
			desc = "create " + ns + "/" + key(name, next)
			gotErr, wantErr = ours.Create(key(name, next), r), oracle.Create(key(name, next), r)
		case op < 33 && len(revs) > 0:
			// A rollback: the parts of an earlier revision, again.
			r := g.release(ns, name, next, revs[g.r.IntN(len(revs))])
			desc = "rollback-style create " + ns + "/" + key(name, next)
			gotErr, wantErr = ours.Create(key(name, next), r), oracle.Create(key(name, next), r)
		case op < 37 && len(revs) > 0:
			v := revs[g.r.IntN(len(revs))].Version
			r := g.release(ns, name, v, nil)
			desc = "create existing " + ns + "/" + key(name, v)
			gotErr, wantErr = ours.Create(key(name, v), r), oracle.Create(key(name, v), r)
		case op < 62:
			v := existing()
			if k, ok := deleted[ns+"/"+name]; ok && g.r.IntN(2) == 0 {
				// The revision the other store deleted last: this
				// store may have seen it.
				v = k
			}
			var like *release.Release
			if g.r.IntN(3) == 0 && len(revs) > 0 {
				like = revs[g.r.IntN(len(revs))]
			}
			r := g.release(ns, name, v, like)
			desc = "update " + ns + "/" + key(name, v)
			gotErr, wantErr = ours.Update(key(name, v), r), oracle.Update(key(name, v), r)
		case op < 92:
			v := existing()
			desc = "delete " + ns + "/" + key(name, v)
			got, gotErr = ours.Delete(key(name, v))
			want, wantErr = oracle.Delete(key(name, v))
			if wantErr == nil {
				deleted[ns+"/"+name] = v
			}
		case op < 97:
			v := existing()
			desc = "get " + ns + "/" + key(name, v)
			got, gotErr = ours.Get(key(name, v))
			want, wantErr = oracle.Get(key(name, v))
		default:
			desc = fmt.Sprintf("close store %d and open it again", which)
			if err := stores[which].Close(); err != nil {
				t.Fatalf("seed %d op %d: close: %v", seed, i, err)
			}
			stores[which] = reopen()
			reopened++
		}
		if strings.HasPrefix(desc, "create ") || strings.HasPrefix(desc, "rollback") {
			if wantErr == nil {
				last[ns+"/"+name] = next
			}
		}
		if a, b := errClass(gotErr), errClass(wantErr); a != b {
			t.Fatalf("seed %d op %d (store %d) %s: error %q, Helm's Memory driver: %q", seed, i, which, desc, a, b)
		}
		if a, b := canon(t, nonNil(got)), canon(t, nonNil(want)); !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d op %d (store %d) %s: results differ\n%s", seed, i, which, desc, lineDiff(a, b))
		}
		if (i+1)%twoStoresEvery == 0 {
			check(i)
		}
	}
	check(n)
	t.Logf("%d operations (seed %d) alternating between two stores, one reopened %d times, matched Helm's Memory driver, with exact part counts every %d", n, seed, reopened, twoStoresEvery)
}

// nonNil returns r as a list: none for nil.
func nonNil(r *release.Release) []*release.Release {
	if r == nil {
		return nil
	}
	return []*release.Release{r}
}
