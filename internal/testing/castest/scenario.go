package castest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
)

// The crash-point scenarios: Helm's operations on a few small releases
// (sharing parts, chunked with small chunk sizes), with what a reader may
// see after each, and the checks of what a reader finds after a writer
// failed or died amid them. castest's own crash-point test runs them over
// a Store; a backend on the protocol runs them over its service (the
// Cosmos DB backend, with a writer whose requests stop after the n-th
// write).

// Namespace is the namespace every scenario writes in.
const Namespace = "team"

func key(name string, v int) string { return driver.MakeKey(name, v) }

// chartOf returns one of a few charts (shared between releases when they
// use the same name), large enough to be chunked.
func chartOf(name string) *chart.Chart {
	r := rand.New(rand.NewPCG(uint64(len(name)), 7))
	var tpl strings.Builder
	for tpl.Len() < 1500 {
		fmt.Fprintf(&tpl, "  k%x: {{ .Values.v%d | quote }}\n", r.Uint64(), r.IntN(4))
	}
	return &chart.Chart{
		Metadata:  &chart.Metadata{Name: name, Version: "1.0.0", AppVersion: "1", APIVersion: chart.APIVersionV2},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\ndata:\n" + tpl.String())}},
		Values:    map[string]interface{}{"v0": "a"},
	}
}

// rel is revision v of release name: chart chartName, values and manifest
// chosen by variant (the same variant, the same parts), status st.
func rel(name string, v int, chartName string, variant int, st release.Status) *release.Release {
	r := rand.New(rand.NewPCG(uint64(variant), 11))
	values := map[string]interface{}{"replicas": float64(variant)}
	settings := map[string]interface{}{}
	for i := 0; i < 40; i++ {
		settings[fmt.Sprintf("s%02d", i)] = fmt.Sprintf("%x", r.Uint64())
	}
	values["settings"] = settings
	var m strings.Builder
	for i := 0; m.Len() < 2000; i++ {
		fmt.Fprintf(&m, "---\nkind: ConfigMap\nmetadata:\n  name: %s-%d\ndata:\n  v: %q\n", name, i, fmt.Sprintf("%x", r.Uint64()))
	}
	t := helmtime.Unix(1700000000+int64(v)*60, 0).UTC()
	return &release.Release{
		Name: name, Namespace: Namespace, Version: v, Chart: chartOf(chartName), Config: values, Manifest: m.String(),
		Labels: map[string]string{"team": "a"},
		Hooks:  []*release.Hook{{Name: "pre", Kind: "Job", Path: "hooks/pre.yaml", Manifest: strings.Repeat(fmt.Sprintf("hook %d %x\n", variant, r.Uint64()), 20)}},
		Info:   &release.Info{FirstDeployed: helmtime.Unix(1700000000, 0).UTC(), LastDeployed: t, Status: st, Description: fmt.Sprintf("revision %d", v)},
	}
}

// valuesOnly is revision v of name whose values differ from the previous
// revision's by one leaf, and whose manifest by one line: the engine
// stores them as deltas.
func valuesOnly(name string, v int, st release.Status) *release.Release {
	r := rel(name, v, "shared", 1, st)
	r.Config["replicas"] = float64(v)
	r.Manifest = strings.Replace(r.Manifest, "name: "+name+"-0", fmt.Sprintf("name: %s-0-v%d", name, v), 1)
	return r
}

// Step is one driver call of a scenario.
type Step struct {
	Call string // "create", "update", "delete"
	Key  string
	Rel  *release.Release
}

// String describes the step, e.g. "create sh.helm.release.v1.app.v1".
func (o Step) String() string { return o.Call + " " + o.Key }

// Run makes the call on s.
func (o Step) Run(s helm3.Store) error {
	switch o.Call {
	case "create":
		return s.Create(o.Key, o.Rel)
	case "update":
		return s.Update(o.Key, o.Rel)
	}
	_, err := s.Delete(o.Key)
	return err
}

// install is Helm's install of revision 1: created pending, then deployed.
func install(name, chartName string, variant int) []Step {
	pending := rel(name, 1, chartName, variant, release.StatusPendingInstall)
	return []Step{{"create", key(name, 1), pending}, {"update", key(name, 1), rel(name, 1, chartName, variant, release.StatusDeployed)}}
}

// upgrade is Helm's upgrade from revision v-1 to v: v created pending, v-1
// superseded, v deployed.
func upgrade(name string, v int, make func(v int, st release.Status) *release.Release) []Step {
	return []Step{
		{"create", key(name, v), make(v, release.StatusPendingUpgrade)},
		{"update", key(name, v-1), make(v-1, release.StatusSuperseded)},
		{"update", key(name, v), make(v, release.StatusDeployed)},
	}
}

// Scenario is what one crash-point run does: Setup by a process without
// faults, then Ops by the faulted process, while (if Other is set) another
// process without faults runs Other on releases of its own, named
// OtherRelease.
type Scenario struct {
	Name         string
	Setup, Ops   []Step
	Other        []Step
	OtherRelease string
}

// Scenarios returns the scenarios, by name: install (sharing chart and
// values with a release already there), install-new-parts, upgrade,
// values-only-upgrades (two upgrades stored as deltas), delete (of two
// revisions and of the release sharing their parts), delete-latest (of
// the highest revision of three, then of the next: the index of latest
// revisions passes down), concurrent (with
// another process installing, upgrading and deleting its own release).
func Scenarios() []Scenario {
	byVariant := func(name string, variants ...int) func(v int, st release.Status) *release.Release {
		return func(v int, st release.Status) *release.Release { return rel(name, v, "shared", variants[v-1], st) }
	}
	vo := func(name string) func(v int, st release.Status) *release.Release {
		return func(v int, st release.Status) *release.Release {
			if v == 1 {
				return rel(name, 1, "shared", 1, st)
			}
			return valuesOnly(name, v, st)
		}
	}
	keep := install("keep", "shared", 1) // shares chart and values with app
	cat := func(ops ...[]Step) []Step {
		var out []Step
		for _, o := range ops {
			out = append(out, o...)
		}
		return out
	}
	return []Scenario{
		{Name: "install", Setup: keep, Ops: install("app", "shared", 1)},
		{Name: "install-new-parts", Setup: keep, Ops: install("app", "own", 2)},
		{Name: "upgrade", Setup: cat(keep, install("app", "shared", 1)),
			Ops: cat(upgrade("app", 2, byVariant("app", 1, 2)), upgrade("app", 3, byVariant("app", 1, 2, 1)))},
		{Name: "values-only-upgrades", Setup: cat(keep, install("app", "shared", 1)),
			Ops: cat(upgrade("app", 2, vo("app")), upgrade("app", 3, vo("app")))},
		{Name: "delete", Setup: cat(keep, install("app", "shared", 1), upgrade("app", 2, byVariant("app", 1, 2))),
			Ops: []Step{{"delete", key("app", 1), nil}, {"delete", key("app", 2), nil}, {"delete", key("keep", 1), nil}}},
		{Name: "delete-latest", Setup: cat(keep, install("app", "shared", 1), upgrade("app", 2, byVariant("app", 1, 2)), upgrade("app", 3, byVariant("app", 1, 2, 1))),
			Ops: []Step{{"delete", key("app", 3), nil}, {"delete", key("app", 2), nil}}},
		{Name: "concurrent", Setup: keep,
			Ops:   cat(install("app", "shared", 2), upgrade("app", 2, byVariant("app", 2, 3))),
			Other: cat(install("web", "shared", 2), upgrade("web", 2, byVariant("web", 2, 3)), []Step{{"delete", key("web", 1), nil}, {"delete", key("web", 2), nil}}), OtherRelease: "web"},
	}
}

// ScenarioNamed returns the scenario of Scenarios named name; it panics if
// there is none.
func ScenarioNamed(name string) Scenario {
	for _, sc := range Scenarios() {
		if sc.Name == name {
			return sc
		}
	}
	panic("castest: no scenario " + name)
}

// States returns what readers may see after each prefix of ops, applied
// over setup: States[i] is the releases (key -> Canon) after ops[:i].
func States(setup, ops []Step) []map[string]string {
	cur := map[string]string{}
	apply := func(o Step) {
		if o.Call == "delete" {
			delete(cur, o.Key)
		} else {
			cur[o.Key] = Canon(o.Rel)
		}
	}
	for _, o := range setup {
		apply(o)
	}
	out := []map[string]string{clone(cur)}
	for _, o := range ops {
		apply(o)
		out = append(out, clone(cur))
	}
	return out
}

// Allowed returns, for every key some state of sc has (its own ops' and
// the other process's), every value (Canon) the key has in a state a
// reader may see during the run, "" for absent.
func (sc Scenario) Allowed() map[string]map[string]bool {
	allowed := map[string]map[string]bool{}
	for _, ss := range [][]map[string]string{States(sc.Setup, sc.Ops), sc.theirs()} {
		keys := map[string]bool{}
		for _, s := range ss {
			for k := range s {
				keys[k] = true
			}
		}
		for k := range keys {
			if allowed[k] == nil {
				allowed[k] = map[string]bool{}
			}
			for _, s := range ss {
				allowed[k][s[k]] = true
			}
		}
	}
	return allowed
}

func (sc Scenario) theirs() []map[string]string {
	if sc.Other == nil {
		return nil
	}
	return States(nil, sc.Other)
}

// Judge checks seen, the releases a reader finds (Snapshot) once the
// faulted process stopped after ops[failed] failed (failed = len(Ops): none
// did) and the other process finished: the ops before the failed one
// happened, the failed one wholly or not at all, none after it; the other
// process's releases are all there; no release has two revisions
// deployed. It returns the violations found (none: nil), and whether the
// failed op is visible whole.
func (sc Scenario) Judge(seen map[string]string, failed int) (violations []string, whole bool) {
	bad := func(format string, a ...any) { violations = append(violations, fmt.Sprintf(format, a...)) }
	mine := States(sc.Setup, sc.Ops)
	want := []map[string]string{mine[failed]}
	if failed < len(sc.Ops) {
		want = append(want, mine[failed+1])
	}
	mineSeen, theirsSeen := split(seen, sc.OtherRelease)
	whole = len(want) > 1 && Equal(mineSeen, want[1])
	if !anyEqual(mineSeen, want) {
		bad("state after op %d of %d failed is none of the %d allowed:\n  have %s\n  want %s", failed, len(sc.Ops), len(want), KeysOf(mineSeen), describe(want))
	}
	if theirs := sc.theirs(); theirs != nil && !Equal(theirsSeen, theirs[len(theirs)-1]) {
		bad("the other process's releases: have %s, want %s", KeysOf(theirsSeen), KeysOf(theirs[len(theirs)-1]))
	}
	for _, name := range []string{"app", "keep", sc.OtherRelease} {
		if n := deployed(seen, name); n > 1 {
			bad("%d revisions of %s deployed", n, name)
		}
	}
	return violations, whole
}

func clone(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// Canon is what a driver hands back for r, as comparable text: Helm's JSON
// round trip with custom labels only.
func Canon(r *release.Release) string {
	b, err := json.Marshal(r)
	if err != nil {
		panic(err)
	}
	var c release.Release
	if err := json.Unmarshal(b, &c); err != nil {
		panic(err)
	}
	labels := map[string]string{}
	for k, v := range r.Labels {
		switch k {
		case "name", "owner", "status", "version", "createdAt", "modifiedAt":
		default:
			labels[k] = v
		}
	}
	c.Labels = labels
	b, _ = json.Marshal(&c)
	return string(b)
}

// Snapshot reads every release of s's namespace: List, and Get of each,
// which must agree, and Query by name of the scenarios' releases, which
// must find as many. Every key of keys that List left out must be not
// found: a release that cannot be read (missing parts) is skipped by List,
// but Get reports it.
func Snapshot(s helm3.Store, keys map[string]map[string]bool) (out map[string]string, err error) {
	rs, err := s.List(func(*release.Release) bool { return true })
	if err != nil {
		return nil, err
	}
	out = map[string]string{}
	defer func() {
		for k := range keys {
			if _, ok := out[k]; ok {
				continue
			}
			if _, gerr := s.Get(k); !errors.Is(gerr, helm3.ErrReleaseNotFound) && err == nil {
				err = fmt.Errorf("get %s, which list left out: %v", k, gerr)
			}
		}
	}()
	for _, r := range rs {
		k := key(r.Name, r.Version)
		out[k] = Canon(r)
		got, err := s.Get(k)
		if err != nil {
			return nil, fmt.Errorf("get %s, which list returned: %w", k, err)
		}
		if Canon(got) != out[k] {
			return nil, fmt.Errorf("get %s differs from list", k)
		}
	}
	for _, name := range []string{"app", "keep", "web"} {
		n := 0
		for k := range out {
			if strings.HasPrefix(k, key(name, 0)[:len(key(name, 0))-1]) {
				n++
			}
		}
		rs, err := s.Query(map[string]string{"name": name})
		if errors.Is(err, helm3.ErrReleaseNotFound) {
			rs, err = nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("query name=%s: %w", name, err)
		}
		if len(rs) != n {
			return nil, fmt.Errorf("query name=%s: %d releases, list has %d", name, len(rs), n)
		}
	}
	return out, latestListed(s, rs)
}

// latestListed checks the summary listing of the latest revisions (the
// protocol's index of them) against rs, every release List returned: one
// entry per release, its highest revision, with its status.
func latestListed(s helm3.Store, rs []*release.Release) error {
	want := map[string]*release.Release{}
	for _, r := range rs {
		if w := want[r.Name]; w == nil || r.Version > w.Version {
			want[r.Name] = r
		}
	}
	p, err := s.Summaries(context.Background(), helm3.SummaryQuery{})
	if err != nil {
		return fmt.Errorf("summaries: %w", err)
	}
	for _, got := range p.Summaries {
		w := want[got.Name]
		if w == nil {
			return fmt.Errorf("summaries list %s at revision %d, which list does not have", got.Name, got.Revision)
		}
		if got.Revision != w.Version || got.Status != w.Info.Status.String() {
			return fmt.Errorf("summaries list %s at revision %d (%s), list's latest is %d (%s)", got.Name, got.Revision, got.Status, w.Version, w.Info.Status)
		}
		delete(want, got.Name)
	}
	for name, w := range want {
		return fmt.Errorf("summaries leave out %s (list's latest: revision %d)", name, w.Version)
	}
	return nil
}

// split separates the releases of the other process (name other) from the
// rest.
func split(m map[string]string, other string) (mine, theirs map[string]string) {
	mine, theirs = map[string]string{}, map[string]string{}
	for k, v := range m {
		if other != "" && strings.HasPrefix(k, "sh.helm.release.v1."+other+".v") {
			theirs[k] = v
		} else {
			mine[k] = v
		}
	}
	return mine, theirs
}

func deployed(m map[string]string, name string) int {
	n := 0
	for k, v := range m {
		if strings.HasPrefix(k, "sh.helm.release.v1."+name+".v") && strings.Contains(v, `"status":"deployed"`) {
			n++
		}
	}
	return n
}

// Equal reports whether two states (key -> Canon) are the same.
func Equal(a, b map[string]string) bool { return maps.Equal(a, b) }

func anyEqual(a map[string]string, bs []map[string]string) bool {
	for _, b := range bs {
		if Equal(a, b) {
			return true
		}
	}
	return false
}

// KeysOf describes a state: its keys with each release's status.
func KeysOf(m map[string]string) string {
	var out []string
	for k, v := range m {
		st := "?"
		if i := strings.Index(v, `"status":"`); i >= 0 {
			st = v[i+10:]
			st = st[:strings.IndexByte(st, '"')]
		}
		out = append(out, strings.TrimPrefix(k, "sh.helm.release.v1.")+"="+st)
	}
	sort.Strings(out)
	return "[" + strings.Join(out, " ") + "]"
}

func describe(ms []map[string]string) string {
	var out []string
	for _, m := range ms {
		out = append(out, KeysOf(m))
	}
	return strings.Join(out, " or ")
}
