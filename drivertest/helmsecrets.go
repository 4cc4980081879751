package drivertest

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	release3 "helm.sh/helm/v3/pkg/release"
	driver3 "helm.sh/helm/v3/pkg/storage/driver"
	release4 "helm.sh/helm/v4/pkg/release"
	rspb4 "helm.sh/helm/v4/pkg/release/v1"
	driver4 "helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/helm4"
	"github.com/helmstore/helmstore/internal/engine"
)

// The Helm 4 and cross-version tests take Helm's own Secrets drivers as
// their oracle: what Helm 3's and Helm 4's Secrets drivers store in one
// namespace and give back (each alone, and one reading what the other
// wrote, as a user moving from Helm 3 to Helm 4 on Secrets gets) is what a
// store must give through the Helm 3 and Helm 4 faces. Releases are
// compared deep-equal, Go values and not encodings, so a time's location or
// a nil slice read back as an empty one counts.

// helmSecrets is Helm 3's and Helm 4's Secrets drivers over one fake
// clientset's namespace: the same Secrets under both.
type helmSecrets struct {
	h3 *driver3.Secrets
	h4 *driver4.Secrets
}

// newHelmSecrets returns both Helms' Secrets drivers over one new, empty
// fake clientset, in namespace ns.
func newHelmSecrets(ns string) helmSecrets {
	secrets := fake.NewClientset().CoreV1().Secrets(ns)
	return helmSecrets{h3: driver3.NewSecrets(secrets), h4: driver4.NewSecrets(secrets)}
}

// twoFaces is one store's backend under both faces, scoped to one
// namespace.
type twoFaces struct {
	h3 helm3.Store
	h4 helm4.Store
}

// onTwoFaces puts the backend under s, a store the harness gave, on the
// Helm 3 face and on the Helm 4 face, both scoped to ns. Neither is to be
// closed: closing one closes the backend, which s's owner closes. The test
// is skipped when s is not a helmstore store (engine.Of finds no engine
// under it), as there is no backend to put on a face.
func onTwoFaces(t *testing.T, s helm3.Store, ns string) twoFaces {
	t.Helper()
	hd := engine.Of(s)
	if hd == nil {
		t.Skipf("the harness's stores (%T) are not helmstore stores (helm3.Open, helm3.New): there is no backend to put on the Helm 4 face", s)
	}
	return twoFaces{
		h3: helm3.New(hd.Backend(), hd.Config()).Namespace(ns),
		h4: helm4.New(hd.Backend(), hd.Config()).Namespace(ns),
	}
}

// v1Of returns the Helm 4 v1 release r holds, failing t if it holds
// anything else (a store of the Helm 4 face returns *v1.Release only).
func v1Of(t testing.TB, what string, r release4.Releaser) *rspb4.Release {
	t.Helper()
	v, ok := r.(*rspb4.Release)
	if !ok || v == nil {
		t.Fatalf("%s: returned %T (%v), want a non-nil *v1.Release", what, r, r)
	}
	return v
}

// v1sOf is v1Of for each release of a list.
func v1sOf(t testing.TB, what string, rs []release4.Releaser) []*rspb4.Release {
	t.Helper()
	out := make([]*rspb4.Release, len(rs))
	for i, r := range rs {
		out[i] = v1Of(t, fmt.Sprintf("%s: release %d", what, i), r)
	}
	return out
}

// sameAsHelm fails t unless got, a release of either Helm (a *v1.Release
// or a Helm 3 *release.Release), is deep-equal to want, what Helm's own
// driver gave, labels included (each release's own, compared whole: use
// listLabels first for a release of List or Query).
func sameAsHelm(t testing.TB, what string, got, want any) {
	t.Helper()
	if reflect.DeepEqual(got, want) {
		return
	}
	g, _ := json.Marshal(got)
	w, _ := json.Marshal(want)
	t.Fatalf("%s: differs from what Helm's own driver gives: %s\n got: %s labels=%v\nwant: %s labels=%v",
		what, deepDiff(reflect.ValueOf(got), reflect.ValueOf(want), "release"),
		excerpt(g, firstDiff(g, w)), releaseLabels(got), excerpt(w, firstDiff(g, w)), releaseLabels(want))
}

// sameListAsHelm fails t unless got and want, releases of List or Query,
// hold the same releases (in any order) and each is sameAsHelm its
// counterpart, its labels compared but for the times Helm's drivers stamp
// as labels on each write (createdAt, modifiedAt).
func sameListAsHelm[R any](t testing.TB, what string, got, want []*R) {
	t.Helper()
	byKey := func(rs []*R) map[string]*R {
		m := map[string]*R{}
		for _, r := range rs {
			m[releaseKey(r)] = listed(r)
		}
		return m
	}
	g, w := byKey(got), byKey(want)
	if len(g) != len(got) || len(w) != len(want) || !slices.Equal(sortedKeys(g), sortedKeys(w)) {
		t.Fatalf("%s: releases %v, want %v (as Helm's own driver lists)", what, sortedKeys(g), sortedKeys(w))
	}
	for k, r := range g {
		sameAsHelm(t, what+": "+k, r, w[k])
	}
}

// listed returns a copy of r, a release of either Helm, without the
// labels that Helm's drivers set to the time of each write.
func listed[R any](r *R) *R {
	c := *r
	var ls *map[string]string
	switch x := any(&c).(type) {
	case *rspb4.Release:
		ls = &x.Labels
	case *release3.Release:
		ls = &x.Labels
	default:
		panic(fmt.Sprintf("listed: %T is not a release", r))
	}
	if *ls != nil {
		*ls = maps.Clone(*ls)
		delete(*ls, "createdAt")
		delete(*ls, "modifiedAt")
	}
	return &c
}

// releaseKey is "namespace/key" of a release of either Helm.
func releaseKey(r any) string {
	switch x := r.(type) {
	case *rspb4.Release:
		return x.Namespace + "/" + key(x.Name, x.Version)
	case *release3.Release:
		return x.Namespace + "/" + key(x.Name, x.Version)
	}
	return fmt.Sprintf("<%T>", r)
}

// releaseLabels returns the labels of a release of either Helm.
func releaseLabels(r any) map[string]string {
	switch x := r.(type) {
	case *rspb4.Release:
		if x != nil {
			return x.Labels
		}
	case *release3.Release:
		if x != nil {
			return x.Labels
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}

var timeType = reflect.TypeOf(time.Time{})

// deepDiff names the first place where a and b, which reflect.DeepEqual
// finds different, differ: a path of fields, indexes and keys, and both
// values there. Times are compared as reflect.DeepEqual compares them
// (instant, monotonic reading and location) and shown with their
// locations.
func deepDiff(a, b reflect.Value, path string) string {
	if a.IsValid() != b.IsValid() || (a.IsValid() && a.Type() != b.Type()) {
		return fmt.Sprintf("%s: %s, want %s", path, typeOf(a), typeOf(b))
	}
	if !a.IsValid() {
		return ""
	}
	if a.Type() == timeType && a.CanInterface() && b.CanInterface() {
		ta, tb := a.Interface().(time.Time), b.Interface().(time.Time)
		if reflect.DeepEqual(ta, tb) {
			return ""
		}
		return fmt.Sprintf("%s: %s (location %q, zero %v), want %s (location %q, zero %v)",
			path, ta.Format(time.RFC3339Nano), ta.Location(), ta.IsZero(), tb.Format(time.RFC3339Nano), tb.Location(), tb.IsZero())
	}
	switch a.Kind() {
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				return fmt.Sprintf("%s: nil %v, want nil %v", path, a.IsNil(), b.IsNil())
			}
			return ""
		}
		return deepDiff(a.Elem(), b.Elem(), path)
	case reflect.Struct:
		for i := range a.NumField() {
			if d := deepDiff(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); d != "" {
				return d
			}
		}
		return ""
	case reflect.Slice:
		if a.IsNil() != b.IsNil() {
			return fmt.Sprintf("%s: nil %v (len %d), want nil %v (len %d)", path, a.IsNil(), a.Len(), b.IsNil(), b.Len())
		}
		fallthrough
	case reflect.Array:
		if a.Len() != b.Len() {
			return fmt.Sprintf("%s: len %d, want %d", path, a.Len(), b.Len())
		}
		for i := range a.Len() {
			if d := deepDiff(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return fmt.Sprintf("%s: nil %v len %d, want nil %v len %d", path, a.IsNil(), a.Len(), b.IsNil(), b.Len())
		}
		for _, k := range a.MapKeys() {
			bv := b.MapIndex(k)
			if !bv.IsValid() {
				return fmt.Sprintf("%s[%v]: present, want absent", path, k)
			}
			if d := deepDiff(a.MapIndex(k), bv, fmt.Sprintf("%s[%v]", path, k)); d != "" {
				return d
			}
		}
		return ""
	case reflect.Func, reflect.Chan, reflect.UnsafePointer:
		if a.Pointer() != b.Pointer() {
			return fmt.Sprintf("%s: %s differ", path, a.Kind())
		}
		return ""
	}
	if a.CanInterface() && b.CanInterface() {
		if !reflect.DeepEqual(a.Interface(), b.Interface()) {
			return fmt.Sprintf("%s: %#v, want %#v", path, a.Interface(), b.Interface())
		}
		return ""
	}
	if a.String() != b.String() || fmt.Sprint(a) != fmt.Sprint(b) {
		return fmt.Sprintf("%s: %v, want %v", path, a, b)
	}
	return ""
}

func typeOf(v reflect.Value) string {
	if !v.IsValid() {
		return "nothing"
	}
	return v.Type().String()
}
