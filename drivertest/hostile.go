package drivertest

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/helm3"
)

// maxLabels is the documented limit of custom labels per release, the same
// on every backend.
const maxLabels = 1000

func testHostile(t *testing.T, h Harness) {
	// Helm's drivers treat an empty value as a value: no release has an
	// empty name or status.
	t.Run("EmptyQueryValues", func(t *testing.T) {
		s := h.open(t)
		mustCreate(t, s, rel("app", "default", 1, release.StatusDeployed))
		for _, q := range []map[string]string{
			{"name": ""}, {"status": ""}, {"name": "app", "status": ""}, {"name": "", "owner": "helm"},
		} {
			rs, err := s.Query(q)
			if !errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Errorf("Query(%v) = %s, %v; want ErrReleaseNotFound", q, joinKeys(rs), err)
			}
		}
	})

	// A view on a namespace no write accepts holds nothing, however the
	// backend compares bytes (trailing spaces, case, NUL).
	t.Run("NamespacesNoWriteAccepts", func(t *testing.T) {
		s := h.open(t)
		mustCreate(t, s, rel("app", "default", 1, release.StatusDeployed))
		for _, ns := range []string{"default ", " default", "Default", "default\x00", "déf", "default/x"} {
			v := s.Namespace(ns)
			if r, err := v.Get(key("app", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Errorf("namespace %q: Get = %v, %v; want ErrReleaseNotFound", ns, brief(r), err)
			}
			if rs, err := v.List(func(*release.Release) bool { return true }); err != nil || len(rs) != 0 {
				t.Errorf("namespace %q: List = %s, %v; want nothing", ns, joinKeys(rs), err)
			}
			if rs, err := v.Query(map[string]string{"name": "app"}); !errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Errorf("namespace %q: Query = %s, %v; want ErrReleaseNotFound", ns, joinKeys(rs), err)
			}
			if _, err := v.Delete(key("app", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Errorf("namespace %q: Delete = %v; want ErrReleaseNotFound", ns, err)
			}
		}
		if _, err := s.Get(key("app", 1)); err != nil {
			t.Fatalf("release gone after reads and deletes through other namespaces: %v", err)
		}
	})

	// Keys whose names no write accepts are not found (or invalid), never a
	// raw error from the backend's encoding or collation.
	t.Run("KeysNoWriteAccepts", func(t *testing.T) {
		s := h.open(t)
		mustCreate(t, s, rel("app", "default", 1, release.StatusDeployed))
		for _, k := range []string{
			key("app\x00", 1), key("äpp", 1), key("app ", 1), key("APP", 1), key("app\xff\xfe", 1),
			key(strings.Repeat("a", 5000), 1), "sh.helm.release.v1.\x00.v1",
		} {
			for op, call := range map[string]func() error{
				"Get":    func() error { _, err := s.Get(k); return err },
				"Delete": func() error { _, err := s.Delete(k); return err },
				"Update": func() error { return s.Update(k, rel("app", "default", 1, release.StatusFailed)) },
			} {
				err := call()
				if op == "Update" {
					if err == nil {
						t.Errorf("%s(%q) succeeded", op, k)
					}
					continue
				}
				if !errors.Is(err, helm3.ErrReleaseNotFound) && !errors.Is(err, helm3.ErrInvalidKey) {
					t.Errorf("%s(%q) = %v; want ErrReleaseNotFound or ErrInvalidKey", op, k, err)
				}
			}
		}
		got, err := s.Get(key("app", 1))
		if err != nil {
			t.Fatal(err)
		}
		sameRelease(t, "after hostile keys", got, rel("app", "default", 1, release.StatusDeployed))
	})

	// A description of megabytes (a failure's whole output, say) and an app
	// version of hundreds of kilobytes are kept and listed whole, however
	// the backend stores a summary (columns, fields, annotations) and
	// whatever it limits them to.
	t.Run("LongSummaryFields", func(t *testing.T) {
		s := h.open(t)
		r := rel("long", "default", 1, release.StatusFailed)
		r.Info.Description = strings.Repeat("Upgrade \"long\" failed: timed out waiting for the condition; ", 24000) // 1.5 MiB
		r.Chart.Metadata.AppVersion = strings.Repeat("1.0.0-rc.", 35000)                                             // 315 KB
		mustCreate(t, s, r)
		mustCreate(t, s, rel("short", "default", 1, release.StatusDeployed))
		got, err := s.Get(key("long", 1))
		if err != nil {
			t.Fatal(err)
		}
		sameRelease(t, "a release with a long description", got, r)
		sums := allSummaries(t, s, helm3.SummaryQuery{})
		if len(sums) != 2 || sums[0].Name != "long" || sums[0].Description != r.Info.Description ||
			sums[0].AppVersion != r.Chart.Metadata.AppVersion || sums[1].Name != "short" {
			var got []string
			for _, sum := range sums {
				got = append(got, fmt.Sprintf("%s (%d bytes of description, %d of app version)", sum.Name, len(sum.Description), len(sum.AppVersion)))
			}
			t.Fatalf("Summaries = %v; want long with %d and %d bytes, then short", got, len(r.Info.Description), len(r.Chart.Metadata.AppVersion))
		}
	})

	// What cannot be read back is refused on write, and nothing is stored.
	t.Run("ValuesTooDeep", func(t *testing.T) {
		s := h.open(t)
		nest := func(n int) map[string]interface{} {
			v := map[string]interface{}{"leaf": "x"}
			for i := 1; i < n; i++ {
				v = map[string]interface{}{"a": v}
			}
			return v
		}
		r := rel("deep", "default", 1, release.StatusDeployed)
		r.Config = nest(10001)
		if err := s.Create(key("deep", 1), r); err == nil {
			t.Fatal("Create stored values nested 10,001 deep, which Helm cannot read back")
		}
		if _, err := s.Get(key("deep", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("after a refused Create: Get = %v, want ErrReleaseNotFound", err)
		}
		r.Config = nest(500)
		mustCreate(t, s, r)
		got, err := s.Get(key("deep", 1))
		if err != nil {
			t.Fatal(err)
		}
		sameRelease(t, "values nested 500 deep", got, r)
	})

	// Every backend holds the documented number of labels, of the longest
	// form Kubernetes allows, and refuses one more, and reserved keys.
	t.Run("LabelLimits", func(t *testing.T) {
		s := h.open(t)
		labels := func(n int) map[string]string {
			m := make(map[string]string, n)
			prefix := strings.Repeat("p", 40) + ".example.com/"
			for i := 0; i < n; i++ {
				k := fmt.Sprintf("%slabel-%04d-%s", prefix, i, strings.Repeat("k", 52))
				m[k] = fmt.Sprintf("v%04d-%s", i, strings.Repeat("x", 57))
			}
			return m
		}
		r := rel("many", "default", 1, release.StatusDeployed)
		r.Labels = labels(maxLabels)
		mustCreate(t, s, r)
		got, err := s.Get(key("many", 1))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Labels, r.Labels) {
			t.Fatalf("Get returned %d labels, want the %d stored", len(got.Labels), len(r.Labels))
		}
		q := map[string]string{"name": "many"}
		n := 0
		for k, v := range r.Labels {
			if n++; n > 3 {
				break
			}
			q[k] = v
		}
		if rs, err := s.Query(q); err != nil || len(rs) != 1 {
			t.Fatalf("Query by three of %d labels = %s, %v", maxLabels, joinKeys(rs), err)
		}
		r.Labels = labels(maxLabels / 2)
		if err := s.Update(key("many", 1), r); err != nil {
			t.Fatal(err)
		}
		if got, err = s.Get(key("many", 1)); err != nil || !reflect.DeepEqual(got.Labels, r.Labels) {
			t.Fatalf("after Update to %d labels: %d labels, %v", len(r.Labels), len(got.Labels), err)
		}
		over := rel("over", "default", 1, release.StatusDeployed)
		over.Labels = labels(maxLabels + 1)
		if err := s.Create(key("over", 1), over); err == nil {
			t.Fatalf("Create accepted %d custom labels, more than the limit of %d", maxLabels+1, maxLabels)
		}
		// (Reserved labels: testReservedLabels.)
		if _, err := s.Get(key("over", 1)); !errors.Is(err, helm3.ErrReleaseNotFound) {
			t.Fatalf("refused release %s: Get = %v, want ErrReleaseNotFound", key("over", 1), err)
		}
	})
}
