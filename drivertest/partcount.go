package drivertest

import (
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/internal/helm3codec"

	"github.com/helmstore/helmstore/driver"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// smallPartBytes bounds the values and manifests of the releases whose
// parts the suite counts exactly: the engine stores a part below 1 KiB in
// full (never as a delta against a keyframe), so the parts a set of such
// releases needs are known without asking the store.
const smallPartBytes = 1 << 10

// liveParts returns the parts that the releases rs (each in its own
// namespace) reference, counted by kind: one per distinct chart, values and
// manifest of a namespace, as a store that shares parts and collects them
// holds exactly.
func liveParts(t testing.TB, rs []*release.Release) map[string]int {
	t.Helper()
	type id struct {
		ns   string
		kind driver.Kind
		d    driver.Digest
	}
	seen := map[id]bool{}
	out := map[string]int{}
	for _, r := range rs {
		sp, err := helm3codec.Codec{}.Split(r)
		if err != nil {
			t.Fatalf("split %s: %v", key(r.Name, r.Version), err)
		}
		for _, k := range driver.Kinds() {
			p := sp.Part(k)
			if p == nil {
				continue
			}
			if k != driver.KindChart && p.Size >= smallPartBytes {
				t.Fatalf("the %s of %s is %d bytes: too large to be counted without deltas", k, key(r.Name, r.Version), p.Size)
			}
			if i := (id{r.Namespace, k, p.Digest}); !seen[i] {
				seen[i] = true
				out[k.String()]++
			}
		}
	}
	return out
}

// nonZero returns the counts of m that are not zero.
func nonZero(m map[string]int) map[string]int {
	out := map[string]int{}
	for k, v := range m {
		if v != 0 {
			out[k] = v
		}
	}
	return out
}

// wantStats fails t unless s (a view) holds exactly the releases rs and
// the parts they reference (liveParts): nothing leaked, nothing written
// twice.
func wantStats(t testing.TB, what string, s helm3.Store, rs []*release.Release) {
	t.Helper()
	st := stats(t, s)
	want := liveParts(t, rs)
	if got := nonZero(st.Parts); st.Releases != len(rs) || !maps.Equal(got, want) {
		t.Fatalf("%s: the store holds %d releases and parts %v; the %d live releases reference parts %v",
			what, st.Releases, got, len(rs), want)
	}
}

// describeState names which of several expected states a store's releases
// are in; "" if none.
func describeState(got []string, states map[string][]string) string {
	names := make([]string, 0, len(states))
	for n := range states {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.Join(got, "\n") == strings.Join(states[n], "\n") {
			return n
		}
	}
	return ""
}

// stateDiff describes got against every expected state, for failures.
func stateDiff(got []string, states map[string][]string) string {
	var b strings.Builder
	for n, want := range states {
		fmt.Fprintf(&b, "\nagainst the state %s: %s", n, lineDiff(got, want))
	}
	return b.String()
}
