package crsplit

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/drivertest"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/castest"
	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// crsplit's Tamperer is a drivertest.Reshaper, on the objects themselves.
// The API server validates every write against the CRDs' schema (types,
// required fields, patterns, minimums) and prunes fields it does not
// declare, so a variant is only what a user with write access can store:
// a string field holding what does not decode (a record that is not
// base64, a chunk set id no object name can hold), a field the schema
// leaves open (spec.release) holding what is not a record, a field the
// schema does not require removed, counts and sizes as large as the
// schema's integers allow, an object replaced by one of another kind, and
// owner references naming other kinds (the API server only checks that
// their fields are present). A number where the schema declares a string,
// or a required field removed, is refused at write time: those variants
// do not exist on crsplit. Each write is checked to be stored as made.
var _ drivertest.Reshaper = (*tamperer)(nil)

// notBase64 is what a string field that should hold base64 holds instead
// (the schema declares such fields plain strings).
const notBase64 = "%%% not base64 %%%"

var (
	spec  = []string{"spec"}
	parts = []string{"spec", "parts"}
)

// chunkedRecord returns a reshape that makes a Release's record claim to
// be in a chunk set of count chunks (0: as it is, or one) of size bytes
// (0: as it is, or the record's) with id ("": as it is, or a real-looking
// one): the chunk set's fields are set, or an inline record moved to a
// chunk set (no chunk is written).
func chunkedRecord(what string, id string, count, size float64) castest.JSONReshape {
	return castest.JSONReshape{What: what, Edit: func(m map[string]any) bool {
		s := castest.JSONField(m, spec...)
		if s == nil {
			return false
		}
		cs := castest.JSONField(s, "releaseChunks")
		if cs == nil {
			rec, _ := s["record"].(string)
			raw, err := base64.StdEncoding.DecodeString(rec)
			if rec == "" || err != nil {
				return false
			}
			cs = map[string]any{"id": "0badc0de", "count": float64(1), "size": float64(len(raw)), "digest": driver.Sum(raw).String()}
			delete(s, "record")
			s["releaseChunks"] = cs
		}
		for k, v := range map[string]any{"id": id, "count": count, "size": size} {
			if v != "" && v != float64(0) {
				cs[k] = v
			}
		}
		return true
	}}
}

// releaseReshapes, partReshapes and chunkReshapes are the variants of each
// shape for a Release, a Chart, Values or Manifest object, and the first
// Chunk of a chunked part.
var releaseReshapes = map[drivertest.Shape][]castest.JSONReshape{
	drivertest.WrongType: {
		castest.SetJSON("spec.record a string that is not base64 (the schema declares a string; a number there is refused)", notBase64, false, spec, "record"),
		castest.SetJSON("spec.releaseChunks.digest another digest (of nothing stored)", fmt.Sprintf("%064d", 0), false, []string{"spec", "releaseChunks"}, "digest"),
		{What: "spec.record moved to spec.release (an object the schema leaves open) as an object whose fields have the wrong types", Edit: func(m map[string]any) bool {
			s := castest.JSONField(m, spec...)
			if s == nil {
				return false
			}
			delete(s, "record")
			delete(s, "releaseChunks")
			s["release"] = map[string]any{"name": 5, "version": "one", "info": "deployed", "chart": []any{"x"}}
			return true
		}},
		chunkedRecord("the record's chunk set id, an open string in the schema, one no object name can hold ('../x y')", "../x y", 0, 0),
	},
	drivertest.MissingField: {
		castest.DropJSON("spec.record removed", spec, "record"),
		castest.DropJSON("spec.parts removed", spec, "parts"),
		castest.DropJSON("spec.parts.chart removed", parts, "chart"),
		castest.DropJSON("spec.parts.values removed", parts, "values"),
		castest.DropJSON("spec.parts.manifest removed", parts, "manifest"),
		castest.DropJSON("spec.createdAt removed", spec, "createdAt"),
		// key, name, version, status and owner are required: refused.
	},
	drivertest.HugeCount: {
		chunkedRecord("the record in a chunk set claiming 2^30 chunks", "", castest.HugeCount, 0),
		chunkedRecord("the record in a chunk set claiming 2^30 chunks of 2^40 bytes", "", castest.HugeCount, castest.HugeSize),
	},
	drivertest.HugeSize: {
		chunkedRecord("the record in a chunk set claiming 2^40 bytes", "", 0, castest.HugeSize),
	},
}

// otherKind returns a reshape that replaces a part object by one of
// another part kind, same name and content (a Chart by a Values object,
// others by a Chart): the write deletes the original and creates it
// there.
var otherKind = castest.JSONReshape{What: "the part object replaced by one of another kind, same name and spec", Edit: func(m map[string]any) bool {
	if m["kind"] == "Chart" {
		m["kind"] = "Values"
	} else {
		m["kind"] = "Chart"
	}
	return true
}}

// ownersAs returns a reshape that makes every ownerReference of an object
// name a kind other than the one it names.
func ownersAs(what, apiVersion, kind string) castest.JSONReshape {
	return castest.JSONReshape{What: what, Edit: func(m map[string]any) bool {
		owners, _ := castest.JSONField(m, "metadata")["ownerReferences"].([]any)
		if len(owners) == 0 {
			return false
		}
		for _, o := range owners {
			if o, _ := o.(map[string]any); o != nil {
				o["apiVersion"], o["kind"] = apiVersion, kind
			}
		}
		return true
	}}
}

var partReshapes = map[drivertest.Shape][]castest.JSONReshape{
	drivertest.WrongType: {
		castest.SetJSON("spec.data a string that is not base64 (the schema declares a string)", notBase64, false, spec, "data"),
		otherKind,
		ownersAs("ownerReferences naming ConfigMaps (v1) instead of Releases", "v1", "ConfigMap"),
		// A string where size, storedSize, chunks or complete is is
		// refused.
	},
	drivertest.MissingField: append(castest.PartDropReshapes(spec...),
		castest.DropJSON("metadata.ownerReferences removed", []string{"metadata"}, "ownerReferences"),
		castest.DropJSON("metadata.labels removed (the object label batch reads select by)", []string{"metadata"}, "labels"),
		// digest, size and storedSize are required: refused.
	),
	drivertest.HugeCount: castest.PartCountReshapes(spec...),
	drivertest.HugeSize:  castest.PartSizeReshapes(spec...),
}

var chunkReshapes = map[drivertest.Shape][]castest.JSONReshape{
	drivertest.WrongType: {
		castest.SetJSON("the first chunk's spec.data a string that is not base64", notBase64, false, spec, "data"),
		castest.SetJSON("the first chunk's spec.of naming another object", "charts/"+fmt.Sprintf("%064d", 0), false, spec, "of"),
	},
	drivertest.MissingField: {
		castest.DropJSON("the first chunk's spec.of removed", spec, "of"),
		// index and data are required: refused.
	},
	drivertest.HugeCount: {
		castest.SetJSON("the first chunk's spec.index 2^30", castest.HugeCount, true, spec, "index"),
	},
}

// embeddedReshapes edit every frame of part d that a Release embeds.
func embeddedReshapes(d string) map[drivertest.Shape][]castest.JSONReshape {
	each := func(what string, fn func(e map[string]any) bool) castest.JSONReshape {
		return castest.JSONReshape{What: what, Edit: func(m map[string]any) bool {
			es, _ := castest.JSONField(m, spec...)["embedded"].([]any)
			done := false
			kept := es[:0:0]
			for _, x := range es {
				if e, _ := x.(map[string]any); e != nil && e["digest"] == d {
					done = true
					if !fn(e) {
						continue
					}
				}
				kept = append(kept, x)
			}
			if done {
				castest.JSONField(m, spec...)["embedded"] = kept
			}
			return done
		}}
	}
	return map[drivertest.Shape][]castest.JSONReshape{
		drivertest.WrongType: {
			each("the embedded frame's data a string that is not base64", func(e map[string]any) bool { e["data"] = notBase64; return true }),
		},
		drivertest.MissingField: {
			each("the embedded frame removed (spec.parts still names it)", func(e map[string]any) bool { return false }),
			each("the embedded frame's size removed", func(e map[string]any) bool {
				_, ok := e["size"]
				delete(e, "size")
				return ok
			}),
		},
		drivertest.HugeSize: {
			each("the embedded frame's size 2^40", func(e map[string]any) bool { e["size"] = castest.HugeSize; return true }),
		},
	}
}

// shaped is an object to damage: where it is, its JSON, and the variants
// that may apply to it.
type shaped struct {
	res, ns, name string
	m             map[string]any
	rs            []castest.JSONReshape
}

// Reshape implements drivertest.Reshaper: on the Release of target.Key
// and, if its record is chunked, the record's first Chunk; or on the part object of target.Part and, if it is chunked, its first
// Chunk (or, for a part no object holds, on every Release embedding it,
// alike). Variants are counted over those that apply.
func (tp *tamperer) Reshape(ctx context.Context, target drivertest.Target, shape drivertest.Shape, i int) (string, error) {
	tp.b.WaitCommits()
	ns := target.Namespace
	var groups [][]shaped
	read := func(res, name string, rs []castest.JSONReshape) (shaped, error) {
		raw, err := tp.b.c.get(ctx, res, ns, name)
		if err != nil {
			return shaped{}, err
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			return shaped{}, err
		}
		return shaped{res, ns, name, m, rs}, nil
	}
	if target.Key != "" {
		o, err := read(resReleases, releaseObjectName(target.Key), releaseReshapes[shape])
		if err != nil {
			return "", err
		}
		groups = append(groups, []shaped{o})
		if rel, err := decodeRelease(mustJSON(o.m)); err == nil && rel.Spec.ReleaseChunks != nil {
			c, err := read(resChunks, releaseChunkName(rel.UID, rel.Spec.ReleaseChunks.ID, 0), chunkReshapes[shape])
			if err != nil {
				return "", err
			}
			groups = append(groups, []shaped{c})
		}
	} else if res, obj, err := tp.part(ctx, ns, target.Part); err == nil {
		o, err := read(res, obj.Name, partReshapes[shape])
		if err != nil {
			return "", err
		}
		groups = append(groups, []shaped{o})
		if obj.Spec.Chunks > 0 {
			c, err := read(resChunks, partChunkNames(obj)[0], chunkReshapes[shape])
			if err != nil {
				return "", err
			}
			groups = append(groups, []shaped{c})
		}
	} else {
		var g []shaped
		raws, lerr := tp.b.c.list(ctx, resReleases, ns, metav1.ListOptions{})
		if lerr != nil {
			return "", lerr
		}
		for _, raw := range raws {
			rel, derr := decodeRelease(raw)
			if derr != nil {
				continue
			}
			for _, e := range rel.Spec.Embedded {
				if e.Digest == target.Part {
					o, err := read(resReleases, rel.Name, embeddedReshapes(target.Part)[shape])
					if err != nil {
						return "", err
					}
					g = append(g, o)
					break
				}
			}
		}
		if len(g) == 0 {
			return "", err
		}
		groups = append(groups, g)
	}
	var jgs []castest.JSONGroup
	for _, g := range groups {
		jg := castest.JSONGroup{Reshapes: g[0].rs, Write: func(j int) error { return tp.write(ctx, g[j]) }}
		for _, o := range g {
			jg.Objects = append(jg.Objects, o.m)
		}
		jgs = append(jgs, jg)
	}
	return castest.ApplyJSONReshape(jgs, i)
}

// write stores o.m over the object it was read from (its resourceVersion
// the precondition), or, if its kind changed, deletes that object and
// creates o.m as an object of the new kind; then checks that the API
// server kept what was written, and waits until its watch cache serves it.
func (tp *tamperer) write(ctx context.Context, o shaped) error {
	res := o.res
	if k, _ := o.m["kind"].(string); o.res != resReleases && o.res != resChunks && k != kindOfResource(o.res) {
		if err := tp.b.c.delete(ctx, o.res, o.ns, o.name, "", ""); err != nil {
			return err
		}
		if err := tp.settle(ctx, o.ns, o.res, o.name); err != nil {
			return err
		}
		res = resourceOfKind(k)
		md := castest.JSONField(o.m, "metadata")
		for _, f := range []string{"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"} {
			delete(md, f)
		}
		if _, err := tp.b.c.create(ctx, res, o.ns, o.name, o.m); err != nil {
			return err
		}
	} else if _, err := tp.b.c.update(ctx, res, o.ns, o.name, o.m); err != nil {
		return err
	}
	raw, err := tp.b.c.get(ctx, res, o.ns, o.name)
	if err != nil {
		return err
	}
	var got map[string]any
	if err := json.Unmarshal(raw, &got); err != nil {
		return err
	}
	for _, path := range [][]string{{"spec"}, {"metadata", "labels"}, {"metadata", "ownerReferences"}} {
		want, have := lookup(o.m, path), lookup(got, path)
		if !reflect.DeepEqual(normalize(want), normalize(have)) {
			return fmt.Errorf("the API server did not keep %v as written: wrote %v, stored %v", path, want, have)
		}
	}
	return tp.settle(ctx, o.ns, res, o.name)
}

// lookup returns the value at path in m (nil if absent).
func lookup(m map[string]any, path []string) any {
	var v any = m
	for _, p := range path {
		o, _ := v.(map[string]any)
		if o == nil {
			return nil
		}
		v = o[p]
	}
	return v
}

// normalize returns v as JSON decodes it (numbers float64, no Go types).
func normalize(v any) any {
	b, _ := json.Marshal(v)
	var out any
	json.Unmarshal(b, &out)
	return out
}

// resourceOfKind returns the resource of the part kind k.
func resourceOfKind(k string) string {
	switch k {
	case "Chart":
		return resCharts
	case "Values":
		return resValues
	}
	return resManifests
}

// mustJSON returns m as JSON.
func mustJSON(m map[string]any) []byte {
	b, _ := json.Marshal(m)
	return b
}

// newReshapeRun stores the data one variant damages
// (castest.ReshapeData), in a namespace of its own: app and web share
// their chart; large has a chunked chart; hooked a chunked record (the
// ChunkedHead); up is app's upgrade, its values a delta embedded in its
// Release.
func newReshapeRun(t *testing.T, k *kubeenv.Server, s helm3.Store, tp *tamperer) castest.ReshapeData {
	t.Helper()
	ns := newNamespace(t, k)
	v := s.Namespace(ns)
	app, web := smallVariant("app", ns, 1, 1, "c"), smallVariant("web", ns, 1, 2, "c")
	up := smallVariant("app", ns, 2, 1, "c")
	up.Config["upgraded"] = true
	hooked := smallVariant("hooked", ns, 1, 3, "h")
	g := fixture.New(7)
	for i := 0; i < 4; i++ {
		hooked.Hooks = append(hooked.Hooks, &release.Hook{Name: "big-hook", Kind: "Job", Path: "hooks/job.yaml", Manifest: g.Manifest("hook", 768<<10)})
	}
	rels := []*release.Release{app, web, fixture.LargeRelease("large", ns, 1), up, hooked}
	r := castest.ReshapeData{Namespace: ns, App: key("app", 1), ChunkedHead: key("hooked", 1)}
	for _, rel := range rels {
		kk := key(rel.Name, rel.Version)
		if err := v.Create(kk, rel); err != nil {
			t.Fatal(err)
		}
		r.Keys = append(r.Keys, kk)
	}
	ctx := ctxT(t)
	heads := map[string]*releaseObject{}
	for _, kk := range r.Keys {
		_, m, err := tp.object(ctx, ns, kk)
		if err != nil {
			t.Fatal(err)
		}
		obj, err := decodeRelease(mustJSON(m))
		if err != nil {
			t.Fatal(err)
		}
		heads[kk] = obj
		p := obj.Spec.Parts
		r.Use(kk, p.Chart, p.Values, p.Manifest, p.ValuesBase, p.ManifestBase)
	}
	r.Shared, r.AppValues = heads[r.App].Spec.Parts.Chart, heads[r.App].Spec.Parts.Values
	r.LargeChart, r.UpValues = heads[key("large", 1)].Spec.Parts.Chart, heads[key("app", 2)].Spec.Parts.Values
	if r.Shared != heads[key("web", 1)].Spec.Parts.Chart {
		t.Fatal("app and web do not share their chart: the test tests nothing")
	}
	if heads[r.ChunkedHead].Spec.ReleaseChunks == nil {
		t.Fatal("hooked's record is not chunked: the test tests nothing")
	}
	if _, obj, err := tp.part(ctx, ns, r.LargeChart); err != nil || obj.Spec.Chunks == 0 {
		t.Fatalf("large's chart is not chunked (%v): the test tests nothing", err)
	}
	if _, _, err := tp.part(ctx, ns, r.UpValues); err == nil {
		t.Fatal("app's upgrade has a Values object: nothing is embedded, the test tests nothing")
	}
	return r
}

// checkReshaped checks, on a fresh store with no cache and a 30 s timeout,
// what the suite checks of such damage (castest.CheckDamaged).
func checkReshaped(t *testing.T, k *kubeenv.Server, r castest.ReshapeData, damaged map[string]bool, what string) {
	t.Helper()
	const timeout = 30 * time.Second
	s, _ := openAs(t, k, kubeenv.Admin, r.Namespace, helm3.WithTimeout(timeout), helm3.WithCacheBytes(0))
	castest.CheckDamaged(t, s, r.Keys, damaged, timeout, what)
}

// TestReshaper runs castest.ReshapeAll: every variant of every shape the
// tamperer has, on a head, a head whose record is chunked, a part shared
// by two releases, a chunked part, a values part and a values delta
// embedded in a Release, each on data of its own, checked as the suite
// checks such damage (checkReshaped).
func TestReshaper(t *testing.T) {
	k := cluster(t)
	w, b := openAs(t, k, kubeenv.Admin, helm3.DefaultNamespace)
	tp := &tamperer{b}
	n := castest.ReshapeAll(t, tp, func(int) castest.ReshapeData { return newReshapeRun(t, k, w, tp) },
		func(r castest.ReshapeData, damaged map[string]bool, what string) {
			checkReshaped(t, k, r, damaged, what)
		},
		func(r castest.ReshapeData) { clearNamespace(t, b, r.Namespace) }) // or every later all-namespaces List reads it
	t.Logf("%d reshapes checked", n)
}

// clearNamespace deletes every helmstore object in ns.
func clearNamespace(t testing.TB, b *kubeBackend, ns string) {
	t.Helper()
	b.WaitCommits()
	for _, res := range allResources {
		if err := b.c.rc.Delete().Namespace(ns).Resource(res).Body(&metav1.DeleteOptions{}).Do(ctxT(t)).Error(); err != nil {
			t.Fatalf("clear %s in %s: %v", res, ns, err)
		}
	}
}
