package memstore_test

import (
	"context"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/memstore"
)

func open(t *testing.T, name string) helm3.Store {
	t.Helper()
	s, err := helm3.Open(context.Background(), memstore.Name, name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func rel(ns, name string, v int, config string) *release.Release {
	return &release.Release{Name: name, Namespace: ns, Version: v,
		Chart:  &chart.Chart{Metadata: &chart.Metadata{Name: "c", Version: "1"}},
		Config: map[string]interface{}{"k": config}, Manifest: "kind: ConfigMap",
		Info: &release.Info{Status: release.StatusDeployed}}
}

func stats(t *testing.T, s helm3.Store, ns string) helm3.Stats {
	t.Helper()
	st, err := s.Namespace(ns).Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Parts are stored once per namespace and removed with the last head of
// that namespace referencing them, whatever other namespaces hold.
func TestPartsCountedPerNamespace(t *testing.T) {
	s := open(t, t.Name())
	defer s.Close()
	for _, ns := range []string{"a", "b"} {
		for v := 1; v <= 2; v++ {
			if err := s.Namespace(ns).Create(driver.MakeKey("app", v), rel(ns, "app", v, "same")); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, ns := range []string{"a", "b"} {
		if st := stats(t, s, ns); st.Releases != 2 || st.TotalParts() != 3 {
			t.Fatalf("namespace %s: %d releases, %v parts; want 2 releases sharing chart, values, manifest", ns, st.Releases, st.Parts)
		}
	}
	// New values: the old values part stays while revision 1 uses it.
	if err := s.Namespace("a").Update(driver.MakeKey("app", 2), rel("a", "app", 2, "other")); err != nil {
		t.Fatal(err)
	}
	if st := stats(t, s, "a"); st.Parts["values"] != 2 {
		t.Fatalf("after an update with new values: %v", st.Parts)
	}
	if _, err := s.Namespace("a").Delete(driver.MakeKey("app", 1)); err != nil {
		t.Fatal(err)
	}
	if st := stats(t, s, "a"); st.Parts["values"] != 1 || st.TotalParts() != 3 {
		t.Fatalf("after deleting the revision holding the old values: %v", st.Parts)
	}
	if _, err := s.Namespace("a").Delete(driver.MakeKey("app", 2)); err != nil {
		t.Fatal(err)
	}
	if st := stats(t, s, "a"); st.Releases != 0 || st.TotalParts() != 0 || st.PartBytes != 0 {
		t.Fatalf("namespace a emptied: %+v", st)
	}
	if st := stats(t, s, "b"); st.Releases != 2 || st.TotalParts() != 3 {
		t.Fatalf("namespace b after a was emptied: %+v", st)
	}
}

// A named space is shared by the stores open on it and goes with the last
// of them; "" is private to its store.
func TestSpaces(t *testing.T) {
	k := driver.MakeKey("app", 1)
	a, b := open(t, t.Name()), open(t, t.Name())
	if err := a.Create(k, rel("default", "app", 1, "x")); err != nil {
		t.Fatal(err)
	}
	a.Close()
	if _, err := b.Get(k); err != nil {
		t.Fatalf("a store on the same space after the other closed: %v", err)
	}
	if _, err := a.Get(k); err == nil {
		t.Fatal("a closed store still reads")
	}
	b.Close()
	c := open(t, t.Name())
	defer c.Close()
	if _, err := c.Get(k); err == nil {
		t.Fatal("a space outlived every store open on it")
	}
	p, q := open(t, ""), open(t, "")
	defer p.Close()
	defer q.Close()
	if err := p.Create(k, rel("default", "app", 1, "x")); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Get(k); err == nil {
		t.Fatal(`two stores on "" share a space`)
	}
}
