package castest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/driver/backend/cas"
	"github.com/helmstore/helmstore/internal/codec"
)

// twoStoresProtocol chunks parts and bodies of a few hundred bytes, so that
// every size path runs.
var twoStoresProtocol = cas.Config{InlinePartBytes: 256, InlineBodyBytes: 256, ChunkBytes: 512,
	Retry: cas.Retry{First: time.Millisecond, Max: 20 * time.Millisecond, NoDeadline: 10 * time.Second}}

// TwoStores is the state of TestTwoStoresAlternating: two stores (processes)
// over one Store's data, taking turns, one of them reopened now and then,
// and what the releases are (the oracle).
type twoStores struct {
	data    *Store
	stores  [2]driver.Store
	cas     [2]*cas.Backend
	live    map[string]*release.Release // key -> release
	version map[string]int              // name -> last version created
}

func (ts *twoStores) open(i int) {
	if ts.stores[i] != nil {
		ts.stores[i].Close()
	}
	// Writes take a moment, so that a background commit of one store
	// overlaps the other store's next operation.
	proc := ts.data.Process(nil).Slow(func(op Op) time.Duration {
		if op.Call == CallReplace {
			return time.Duration(op.Seq%3) * time.Millisecond
		}
		return 0
	})
	b := cas.New(proc, twoStoresProtocol)
	s := backend.New(b, &driver.Config{Name: "castest", CacheBytes: driver.DefaultCacheBytes, Timeout: 30 * time.Second, Log: func(string, ...interface{}) {}})
	ts.stores[i], ts.cas[i] = s.Namespace(Namespace), b
}

// step runs one random operation on store i and checks its answer against
// the oracle.
func (ts *twoStores) step(r *rand.Rand, i int) (string, error) {
	s := ts.stores[i]
	names := []string{"a", "b", "c"}
	name := names[r.IntN(len(names))]
	chartName := []string{"alpha", "beta", "gamma"}[r.IntN(3)]
	v := ts.version[name]
	switch op := r.IntN(10); {
	case op < 3: // install or upgrade: a new revision
		nv := v + 1
		k := key(name, nv)
		rls := rel(name, nv, chartName, r.IntN(4), release.StatusDeployed)
		err := s.Create(k, rls)
		if err != nil {
			return "create " + k, err
		}
		ts.version[name], ts.live[k] = nv, rls
		return "create " + k, nil
	case op < 6: // update some revision, which may be gone (deleted by the other store)
		if v == 0 {
			return "none", nil
		}
		u := 1 + r.IntN(v)
		k := key(name, u)
		rls := rel(name, u, chartName, r.IntN(4), release.StatusSuperseded)
		err := s.Update(k, rls)
		_, exists := ts.live[k]
		switch {
		case exists && err == nil:
			ts.live[k] = rls
		case !exists && errors.Is(err, driver.ErrReleaseNotFound):
		default:
			return "update " + k, fmt.Errorf("update (exists %v): %v", exists, err)
		}
		return "update " + k, nil
	default: // delete some revision, which may be gone
		if v == 0 {
			return "none", nil
		}
		k := key(name, 1+r.IntN(v))
		_, err := s.Delete(k)
		_, exists := ts.live[k]
		switch {
		case exists && err == nil:
			delete(ts.live, k)
		case !exists && errors.Is(err, driver.ErrReleaseNotFound):
		default:
			return "delete " + k, fmt.Errorf("delete (exists %v): %v", exists, err)
		}
		return "delete " + k, nil
	}
}

// check compares the stored releases with the oracle, and Stats with the
// parts the live heads reference: each distinct part once, nothing else.
func (ts *twoStores) check(t *testing.T, s driver.Store) error {
	want := map[string]map[string]bool{}
	var keys []string
	for _, o := range ts.data.Objects(cas.KindHead) {
		if _, pending := o.Labels[cas.LabelPending]; pending {
			return fmt.Errorf("head %s is pending with no write running", o.Name)
		}
		keys = append(keys, o.Name)
		h := backend.Head{}
		if err := h.SetDigestText(o.Head.Parts); err != nil {
			return err
		}
		for _, ref := range h.Parts() {
			k := ref.Kind.String()
			if want[k] == nil {
				want[k] = map[string]bool{}
			}
			want[k][ref.Digest.String()] = true
		}
	}
	var oracle []string
	for k := range ts.live {
		oracle = append(oracle, k)
	}
	sort.Strings(keys)
	sort.Strings(oracle)
	if strings.Join(keys, ",") != strings.Join(oracle, ",") {
		return fmt.Errorf("stored releases %v, want %v", keys, oracle)
	}
	st, err := s.Stats(t.Context())
	if err != nil {
		return err
	}
	for _, k := range []string{"chart", "values", "manifest"} {
		if st.Parts[k] != len(want[k]) {
			var dangling []string
			for _, o := range ts.data.Objects(partKindNamed(k)) {
				if !want[k][o.Name] {
					dangling = append(dangling, fmt.Sprintf("%s (referrers %v)", o.Name[:12], o.Referrers))
				}
			}
			return fmt.Errorf("Stats counts %d %s parts, the live releases reference %d; not referenced: %v", st.Parts[k], k, len(want[k]), dangling)
		}
	}
	return nil
}

// TestTwoStoresAlternating runs seeded random Helm writes (new revisions,
// updates and deletes of revisions, some already deleted by the other
// store) alternating between two stores over one data, one of them
// reopened now and then, and checks after every operation that Stats
// counts exactly the parts the live releases reference: a part left with
// no live referrer is a leak that no later operation of the protocol meets
// again.
func TestTwoStoresAlternating(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 22))
			ts := &twoStores{data: New(nil), live: map[string]*release.Release{}, version: map[string]int{}}
			ts.open(0)
			ts.open(1)
			defer func() { ts.stores[0].Close(); ts.stores[1].Close() }()
			var history []string
			for n := 0; n < 1200; n++ {
				i := n % 2
				if r.IntN(20) == 0 {
					ts.open(i) // a new process: nothing seen, nothing known
					history = append(history, fmt.Sprintf("reopen %d", i))
				}
				what, err := ts.step(r, i)
				history = append(history, fmt.Sprintf("%d: %s", i, what))
				if err == nil && (n%10 == 9 || n == 1199) {
					ts.cas[0].WaitCommits()
					ts.cas[1].WaitCommits()
					err = ts.check(t, ts.stores[1-i])
				}
				if err != nil {
					t.Fatalf("op %d (%s on store %d): %v\nlast ops: %s", n, what, i, err, strings.Join(history[max(0, len(history)-12):], "; "))
				}
			}
		})
	}
}

// partKindNamed returns the kind of the part objects of the part kind named
// k ("chart", ...).
func partKindNamed(k string) cas.Kind {
	for _, c := range codec.Kinds {
		if c.String() == k {
			return cas.PartKind(c)
		}
	}
	return 0
}
