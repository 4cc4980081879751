package castest_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	helmtime "helm.sh/helm/v3/pkg/time"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/driver/backend"
	"github.com/helmstore/helmstore/driver/backend/cas"
)

// ns is the namespace every scenario writes in.
const ns = "team"

// protocol makes every size path of the protocol run on small releases
// (chunked parts, chunked head bodies), and retries fast.
var protocol = cas.Config{
	InlinePartBytes: 256, InlineBodyBytes: 256, ChunkBytes: 512,
	Retry:          cas.Retry{First: time.Millisecond, Max: 20 * time.Millisecond, NoDeadline: 10 * time.Second},
	CleanupTimeout: 20 * time.Second,
}

// open returns a store over os with the protocol's small sizes; cacheBytes
// 0 makes every read go to the object store.
func open(os cas.ObjectStore, cacheBytes int64) (driver.Store, *cas.Backend) {
	b := cas.New(os, protocol)
	s := backend.New(b, &driver.Config{Name: "castest", CacheBytes: cacheBytes, Timeout: 30 * time.Second, Log: func(string, ...interface{}) {}})
	return s.Namespace(ns), b
}

func key(name string, v int) string { return backend.MakeKey(name, v) }

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
		Name: name, Namespace: ns, Version: v, Chart: chartOf(chartName), Config: values, Manifest: m.String(),
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

// op is one driver call of a scenario.
type op struct {
	call string // "create", "update", "delete"
	key  string
	rel  *release.Release
}

func (o op) String() string { return o.call + " " + o.key }

func (o op) run(s driver.Store) error {
	switch o.call {
	case "create":
		return s.Create(o.key, o.rel)
	case "update":
		return s.Update(o.key, o.rel)
	}
	_, err := s.Delete(o.key)
	return err
}

// install is Helm's install of revision 1: created pending, then deployed.
func install(name, chartName string, variant int) []op {
	pending := rel(name, 1, chartName, variant, release.StatusPendingInstall)
	return []op{{"create", key(name, 1), pending}, {"update", key(name, 1), rel(name, 1, chartName, variant, release.StatusDeployed)}}
}

// upgrade is Helm's upgrade from revision v-1 to v: v created pending, v-1
// superseded, v deployed.
func upgrade(name string, v int, make func(v int, st release.Status) *release.Release) []op {
	return []op{
		{"create", key(name, v), make(v, release.StatusPendingUpgrade)},
		{"update", key(name, v-1), make(v-1, release.StatusSuperseded)},
		{"update", key(name, v), make(v, release.StatusDeployed)},
	}
}

// scenario is what one run does: setup by a process without faults, then
// ops by the faulted process, while (if other is set) another process
// without faults runs other on releases of its own.
type scenario struct {
	name         string
	setup, ops   []op
	other        []op
	otherRelease string // the name other writes
}

func scenarios() []scenario {
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
	cat := func(ops ...[]op) []op {
		var out []op
		for _, o := range ops {
			out = append(out, o...)
		}
		return out
	}
	return []scenario{
		{name: "install", setup: keep, ops: install("app", "shared", 1)},
		{name: "install-new-parts", setup: keep, ops: install("app", "own", 2)},
		{name: "upgrade", setup: cat(keep, install("app", "shared", 1)),
			ops: cat(upgrade("app", 2, byVariant("app", 1, 2)), upgrade("app", 3, byVariant("app", 1, 2, 1)))},
		{name: "values-only-upgrades", setup: cat(keep, install("app", "shared", 1)),
			ops: cat(upgrade("app", 2, vo("app")), upgrade("app", 3, vo("app")))},
		{name: "delete", setup: cat(keep, install("app", "shared", 1), upgrade("app", 2, byVariant("app", 1, 2))),
			ops: []op{{"delete", key("app", 1), nil}, {"delete", key("app", 2), nil}, {"delete", key("keep", 1), nil}}},
		{name: "concurrent", setup: keep,
			ops:   cat(install("app", "shared", 2), upgrade("app", 2, byVariant("app", 2, 3))),
			other: cat(install("web", "shared", 2), upgrade("web", 2, byVariant("web", 2, 3)), []op{{"delete", key("web", 1), nil}, {"delete", key("web", 2), nil}}), otherRelease: "web"},
	}
}

// states returns what readers may see after each prefix of ops, applied
// over setup: states[i] is the releases (key -> normalized JSON) after
// ops[:i].
func states(setup, ops []op) []map[string]string {
	cur := map[string]string{}
	apply := func(o op) {
		if o.call == "delete" {
			delete(cur, o.key)
		} else {
			cur[o.key] = canon(o.rel)
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

func clone(m map[string]string) map[string]string {
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// canon is what a driver hands back for r, as comparable text: Helm's JSON
// round trip with custom labels only.
func canon(r *release.Release) string {
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
