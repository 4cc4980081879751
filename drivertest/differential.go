package drivertest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
)

// errClass reduces an error to what Helm's contract distinguishes.
func errClass(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, helmdriver.ErrReleaseExists):
		return "exists"
	case errors.Is(err, helmdriver.ErrReleaseNotFound):
		return "not-found"
	case errors.Is(err, helmdriver.ErrInvalidKey):
		return "invalid-key"
	}
	return "error: " + err.Error()
}

// canon renders releases for comparison, sorted: one line each, with its
// namespace and key, Helm's JSON encoding of it and its custom labels.
func canon(t testing.TB, rs []*release.Release) []string {
	t.Helper()
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, canonLine(r, encode(t, r)))
	}
	sort.Strings(out)
	return out
}

// canonLine is canon's line for r, whose encoding is enc.
func canonLine(r *release.Release, enc []byte) string {
	return fmt.Sprintf("%s/%s %s labels=%v", r.Namespace, key(r.Name, r.Version), enc, customOnly(r.Labels))
}

// generator makes the random operations of the differential test.
type generator struct {
	r      *rand.Rand
	charts []*chart.Chart
}

var (
	diffNamespaces = []string{"default", "team-a", "team-b"}
	diffNames      = []string{"web", "db", "cache", "queue", "api"}
	diffStatuses   = []release.Status{release.StatusDeployed, release.StatusSuperseded, release.StatusFailed, release.StatusUninstalled, release.StatusPendingUpgrade}
)

func (g *generator) pick(xs []string) string { return xs[g.r.IntN(len(xs))] }

func (g *generator) release(ns, name string, version int) *release.Release {
	r := rel(name, ns, version, diffStatuses[g.r.IntN(len(diffStatuses))])
	r.Chart = g.charts[g.r.IntN(len(g.charts))]
	r.Config = map[string]interface{}{"greeting": fmt.Sprintf("hi-%d", g.r.IntN(4)), "replicas": float64(g.r.IntN(3))}
	if g.r.IntN(5) == 0 {
		r.Config = nil
	}
	if g.r.IntN(3) == 0 {
		r.Manifest = ""
	}
	r.Info.Description = fmt.Sprintf("op %d", g.r.IntN(1000))
	r.Labels = map[string]string{}
	if g.r.IntN(2) == 0 {
		r.Labels["team"] = g.pick([]string{"a", "b"})
	}
	if g.r.IntN(3) == 0 {
		r.Labels["env"] = g.pick([]string{"prod", "dev"})
	}
	return r
}

func testDifferential(t *testing.T, h Harness) {
	s := h.open(t)
	mem := h.newMemory()
	seed := h.seed()
	g := &generator{r: rand.New(rand.NewPCG(seed, 7)), charts: []*chart.Chart{testChart("demo", "0.1.0"), testChart("demo", "0.2.0"), testChart("other", "1.0.0")}}
	g.charts[2].Templates = append(g.charts[2].Templates, &chart.File{Name: "templates/extra.yaml", Data: []byte("# extra\n")})
	n := h.ops()
	everything := func(*release.Release) bool { return true }
	for i := 0; i < n; i++ {
		ns := g.pick(diffNamespaces)
		name := g.pick(diffNames)
		version := g.r.IntN(5) // 0 too: Helm's drivers store a revision 0
		k := key(name, version)
		ours, oracle := s.Namespace(ns), mem.Namespace(ns)
		var desc string
		var gotErr, wantErr error
		var got, want []*release.Release
		one := func(r *release.Release) []*release.Release {
			if r == nil {
				return nil
			}
			return []*release.Release{r}
		}
		switch op := g.r.IntN(100); {
		case op < 30:
			r := g.release(ns, name, version)
			desc = "create " + ns + "/" + k
			gotErr, wantErr = ours.Create(k, r), oracle.Create(k, r)
		case op < 45:
			r := g.release(ns, name, version)
			desc = "update " + ns + "/" + k
			gotErr, wantErr = ours.Update(k, r), oracle.Update(k, r)
		case op < 55:
			desc = "delete " + ns + "/" + k
			var a, b *release.Release
			a, gotErr = ours.Delete(k)
			b, wantErr = oracle.Delete(k)
			got, want = one(a), one(b)
		case op < 70:
			desc = "get " + ns + "/" + k
			var a, b *release.Release
			a, gotErr = ours.Get(k)
			b, wantErr = oracle.Get(k)
			got, want = one(a), one(b)
		case op < 88:
			q := map[string]string{}
			if g.r.IntN(4) != 0 {
				q["name"] = name
			}
			if g.r.IntN(2) == 0 {
				q["owner"] = "helm"
			}
			if g.r.IntN(3) == 0 {
				q["status"] = diffStatuses[g.r.IntN(len(diffStatuses))].String()
			}
			if g.r.IntN(4) == 0 {
				q["version"] = fmt.Sprint(version)
			}
			if g.r.IntN(5) == 0 {
				ns, ours, oracle = "", s.Namespace(""), mem.Namespace("")
			}
			desc = fmt.Sprintf("query %q %v", ns, q)
			got, gotErr = ours.Query(q)
			want, wantErr = oracle.Query(q)
		default:
			status := diffStatuses[g.r.IntN(len(diffStatuses))]
			if g.r.IntN(4) == 0 {
				ns, ours, oracle = "", s.Namespace(""), mem.Namespace("")
			}
			desc = fmt.Sprintf("list %q status=%s", ns, status)
			f := func(r *release.Release) bool { return r.Info.Status == status }
			got, gotErr = ours.List(f)
			want, wantErr = oracle.List(f)
		}
		if a, b := errClass(gotErr), errClass(wantErr); a != b {
			t.Fatalf("seed %d op %d %s: error %q, Helm's Memory driver: %q", seed, i, desc, a, b)
		}
		if a, b := canon(t, got), canon(t, want); !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d op %d %s: results differ\n%s", seed, i, desc, lineDiff(a, b))
		}
		all, err := s.Namespace("").List(everything)
		if err != nil {
			t.Fatalf("seed %d op %d: list all: %v", seed, i, err)
		}
		if a, b := canon(t, all), mem.Namespace("").canonList(t, everything); !reflect.DeepEqual(a, b) {
			t.Fatalf("seed %d after op %d %s: stored state differs\n%s", seed, i, desc, lineDiff(a, b))
		}
	}
	t.Logf("%d operations (seed %d) matched Helm's Memory driver", n, seed)
}

// lineDiff describes how two sorted lists of canon lines differ: the lines
// only one of them holds.
func lineDiff(got, want []string) string {
	in := func(xs []string) map[string]bool {
		m := make(map[string]bool, len(xs))
		for _, x := range xs {
			m[x] = true
		}
		return m
	}
	g, w := in(got), in(want)
	var b strings.Builder
	fmt.Fprintf(&b, "%d releases, Helm's Memory driver %d", len(got), len(want))
	for _, x := range got {
		if !w[x] {
			fmt.Fprintf(&b, "\n only got:  %s", x)
		}
	}
	for _, x := range want {
		if !g[x] {
			fmt.Fprintf(&b, "\n only want: %s", x)
		}
	}
	return b.String()
}
