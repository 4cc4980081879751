package crsplit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/helmstore/helmstore/internal/fixture"
	"github.com/helmstore/helmstore/internal/testenv"
)

// TestPrinterColumns fetches releases as kubectl does (the Table
// representation the CRD's printer columns define) and prints them as
// `kubectl get releases.helmstore.io -A` would.
func TestPrinterColumns(t *testing.T) {
	k := cluster(t)
	// Fixed names, so the output can go in the README as it is.
	ns1, ns2 := "monitoring", "frontend"
	ensureNamespace(t, k, ns1)
	ensureNamespace(t, k, ns2)
	s, b := openAs(t, k, testenv.KubeAdmin, ns1)
	t.Cleanup(func() {
		for _, k := range []string{key("monitoring", 1), key("monitoring", 2), key("monitoring", 3)} {
			s.Delete(k)
		}
		s.Namespace(ns2).Delete(key("web", 1))
	})
	for v := 1; v <= 3; v++ {
		r := fixture.LargeRelease("monitoring", ns1, v)
		if v < 3 {
			r.Info.Status = release.StatusSuperseded
		}
		if err := s.Create(key("monitoring", v), r); err != nil {
			t.Fatal(err)
		}
	}
	web := smallRelease("web", ns2, 1, "nginx")
	if err := s.Namespace(ns2).Create(key("web", 1), web); err != nil {
		t.Fatal(err)
	}
	for _, wide := range []bool{false, true} {
		var table metav1.Table
		for _, ns := range []string{ns1, ns2} {
			raw, err := body(b.c.rc.Get().Namespace(ns).Resource(resReleases).
				SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctxT(t)))
			if err != nil {
				t.Fatal(err)
			}
			var part metav1.Table
			if err := json.Unmarshal(raw, &part); err != nil {
				t.Fatal(err)
			}
			table.ColumnDefinitions = part.ColumnDefinitions
			table.Rows = append(table.Rows, part.Rows...)
		}
		var heads []string
		for _, c := range table.ColumnDefinitions {
			if wide || c.Priority == 0 {
				heads = append(heads, c.Name)
			}
		}
		want := "Name Release Revision Status Chart App Version Age"
		if wide {
			want = "Name Release Revision Status Chart App Version Updated Description Age"
		}
		if strings.Join(heads, " ") != want {
			t.Fatalf("columns %q, want %q", strings.Join(heads, " "), want)
		}
		// The Table rows carry the objects' metadata, for the namespace
		// column kubectl -A adds.
		for i := range table.Rows {
			var m metav1.PartialObjectMetadata
			json.Unmarshal(table.Rows[i].Object.Raw, &m)
			table.Rows[i].Object.Object = &m
		}
		var out bytes.Buffer
		p := printers.NewTablePrinter(printers.PrintOptions{WithNamespace: true, Wide: wide})
		if err := p.PrintObj(&table, &out); err != nil {
			t.Fatal(err)
		}
		text := out.String()
		t.Logf("kubectl get releases.helmstore.io -A%s\n%s", map[bool]string{true: " -o wide"}[wide], text)
		lines := strings.Split(strings.TrimSpace(text), "\n")
		if len(lines) != 5 {
			t.Fatalf("%d lines, want a header and 4 releases", len(lines))
		}
		for _, wantRow := range [][]string{
			{ns1, key("monitoring", 3), "monitoring", "3", "deployed", "big-stack-58.2.1", "v0.58.2.1"},
			{ns1, key("monitoring", 1), "monitoring", "1", "superseded", "big-stack-58.2.1"},
			{ns2, key("web", 1), "web", "1", "deployed", "nginx-1.0.0", "v0.1.0.0"},
		} {
			found := false
			for _, l := range lines {
				if strings.Join(strings.Fields(l)[:len(wantRow)], " ") == strings.Join(wantRow, " ") {
					found = true
				}
			}
			if !found {
				t.Fatalf("no row %v in\n%s", wantRow, text)
			}
		}
		if wide && !strings.Contains(text, "Upgrade complete") {
			t.Fatal("wide output lacks the description")
		}
	}
	// The parts of the three revisions: one chart (in chunks), three values
	// and three manifests.
	var out bytes.Buffer
	for _, res := range []string{resCharts, resValues, resManifests} {
		raw, err := body(b.c.rc.Get().Namespace(ns1).Resource(res).
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").Do(ctxT(t)))
		if err != nil {
			t.Fatal(err)
		}
		var table metav1.Table
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber() // integers print as integers, as kubectl prints them
		if err := dec.Decode(&table); err != nil {
			t.Fatal(err)
		}
		if want := map[string]int{resCharts: 1, resValues: 3, resManifests: 3}[res]; len(table.Rows) != want {
			t.Fatalf("%d %s, want %d", len(table.Rows), res, want)
		}
		fmt.Fprintf(&out, "$ kubectl get %s.%s -n %s\n", res, Group, ns1)
		if err := printers.NewTablePrinter(printers.PrintOptions{}).PrintObj(&table, &out); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("parts\n%s", out.String())
}
