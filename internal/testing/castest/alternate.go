package castest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/cas"
	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/caswire"
)

// Alternate runs ops seeded random Helm writes (new revisions, and updates
// and deletes of revisions, some of them deleted by the other store
// already) alternating between two stores over one data, each checked
// against what is stored, reopening one of them (a new process: nothing
// seen, nothing known) one time in twenty. Every ten operations, with
// both stores' background commits done, it checks that the head objects
// are the releases written, none pending, and that Stats counts exactly
// the parts those heads reference: a part left with no live referrer is a
// leak that no later operation of the protocol meets again. open returns
// a new store over the data, scoped to Namespace, and its protocol.
func Alternate(t *testing.T, seed uint64, ops int, open func(t *testing.T) (helm3.Store, *cas.Backend)) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 22))
	ts := &alternating{live: map[string]bool{}, version: map[string]int{}}
	reopen := func(i int) {
		if ts.stores[i] != nil {
			ts.stores[i].Close()
		}
		ts.stores[i], ts.cas[i] = open(t)
	}
	reopen(0)
	reopen(1)
	defer func() { ts.stores[0].Close(); ts.stores[1].Close() }()
	var history []string
	for n := 0; n < ops; n++ {
		i := n % 2
		if r.IntN(20) == 0 {
			reopen(i)
			history = append(history, fmt.Sprintf("reopen %d", i))
		}
		what, err := ts.step(r, i)
		history = append(history, fmt.Sprintf("%d: %s", i, what))
		if err == nil && (n%10 == 9 || n == ops-1) {
			WaitCommits(ts.cas[0])
			WaitCommits(ts.cas[1])
			err = ts.check(t, ts.stores[1-i], ObjectStore(ts.cas[1-i]))
		}
		if err != nil {
			t.Fatalf("seed %d, op %d (%s on store %d): %v\nlast ops: %s", seed, n, what, i, err, strings.Join(history[max(0, len(history)-12):], "; "))
		}
	}
}

// alternating is the state of Alternate: the two stores, and which
// releases exist (the oracle).
type alternating struct {
	stores  [2]helm3.Store
	cas     [2]*cas.Backend
	live    map[string]bool // keys stored
	version map[string]int  // name -> last version created
}

// step runs one random operation on store i and checks its answer against
// the oracle.
func (ts *alternating) step(r *rand.Rand, i int) (string, error) {
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
		ts.version[name], ts.live[k] = nv, true
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
		case !exists && errors.Is(err, helm3.ErrReleaseNotFound):
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
		case !exists && errors.Is(err, helm3.ErrReleaseNotFound):
		default:
			return "delete " + k, fmt.Errorf("delete (exists %v): %v", exists, err)
		}
		return "delete " + k, nil
	}
}

// check compares the stored releases with the oracle, and Stats with the
// parts the live heads reference: each distinct part once, nothing else.
func (ts *alternating) check(t *testing.T, s helm3.Store, os cas.ObjectStore) error {
	want := map[string]map[string]bool{}
	var keys []string
	heads, err := os.List(t.Context(), cas.Selector{Kind: cas.KindHead, Namespace: Namespace})
	if err != nil {
		return err
	}
	for _, o := range heads {
		if o.Err != nil || o.Head == nil {
			return fmt.Errorf("head %s does not decode: %v", o.Name, o.Err)
		}
		if _, pending := o.Labels[caswire.LabelPending]; pending {
			return fmt.Errorf("head %s is pending with no write running", o.Name)
		}
		keys = append(keys, o.Name)
		h := driver.Head{}
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
			objs, err := os.List(t.Context(), cas.Selector{Kind: partKindNamed(k), Namespace: Namespace, Meta: true})
			if err != nil {
				return err
			}
			for _, o := range objs {
				if !want[k][o.Name] {
					dangling = append(dangling, fmt.Sprintf("%s (referrers %v)", o.Name[:12], o.Referrers))
				}
			}
			return fmt.Errorf("stats counts %d %s parts, the live releases reference %d; not referenced: %v", st.Parts[k], k, len(want[k]), dangling)
		}
	}
	return nil
}

// partKindNamed returns the kind of the part objects of the part kind named
// k ("chart", ...).
func partKindNamed(k string) cas.Kind {
	for _, c := range driver.Kinds() {
		if c.String() == k {
			return cas.Kind(caswire.PartKind(c))
		}
	}
	return 0
}
