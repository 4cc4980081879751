package crsplit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/printers"

	"github.com/helmstore/helmstore/internal/testing/fixture"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

// TestPrinterColumns fetches releases as kubectl does (the Table
// representation the CRD's printer columns define) and prints them as
// `kubectl get releases.helmstore.io -A` would.
func TestPrinterColumns(t *testing.T) {
	k := cluster(t)
	// Fixed names, so the output can go in docs/crsplit.md as it is.
	ns1, ns2 := "monitoring", "frontend"
	ensureNamespace(t, k, ns1)
	ensureNamespace(t, k, ns2)
	s, b := openAs(t, k, kubeenv.Admin, ns1)
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
		table := serverTable(t, b, ns1, res)
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

// The printer columns are filled when the release record is too large for
// its Release object and goes to chunks: they come from the engine's
// summary of the release, not from the record. Checked on the Table the API
// server computes, for a small release and a chunked one, after a Create and
// after an Update.
func TestPrinterColumnsOfChunkedRecord(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	s, b := openAs(t, k, kubeenv.Admin, ns)
	withHooks := func(name string, v int, size int) *release.Release {
		r := smallRelease(name, ns, v, "hooked-chart")
		r.Chart.Metadata.AppVersion = "9.8.7"
		r.Info.Description = fmt.Sprintf("%s revision %d", name, v)
		g := fixture.New(uint64(v))
		for i := 0; size > 0 && i < 4; i++ {
			r.Hooks = append(r.Hooks, &release.Hook{Name: "big-hook", Kind: "Job", Path: "hooks/job.yaml", Manifest: g.Manifest("hook", size/4)})
		}
		return r
	}
	rels := map[string]*release.Release{"small": withHooks("small", 1, 0), "large": withHooks("large", 1, 3<<20)}
	for name, r := range rels {
		if err := s.Create(key(name, 1), r); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		b.WaitCommits()
		for name, r := range rels {
			raw, err := b.c.get(ctxT(t), resReleases, ns, releaseObjectName(key(name, 1)))
			if err != nil {
				t.Fatal(err)
			}
			obj, err := decodeRelease(raw)
			if err != nil {
				t.Fatal(err)
			}
			if chunked := obj.Spec.ReleaseChunks != nil; chunked != (name == "large") {
				t.Fatalf("%s: %s release record chunked: %v", when, name, chunked)
			}
			// The Table shows a date column as an age: the exact time is
			// checked on the field it reads.
			if want := r.Info.LastDeployed.Time.Format(time.RFC3339Nano); obj.Spec.Updated != want {
				t.Errorf("%s: %s: spec.updated %q, want %q", when, name, obj.Spec.Updated, want)
			}
		}
		table := serverTable(t, b, ns, resReleases)
		if len(table.Rows) != len(rels) {
			t.Fatalf("%s: %d rows, want %d", when, len(table.Rows), len(rels))
		}
		for _, row := range table.Rows {
			cells := map[string]string{}
			for i, c := range table.ColumnDefinitions {
				if i < len(row.Cells) && row.Cells[i] != nil {
					cells[c.Name] = fmt.Sprint(row.Cells[i])
				}
			}
			r := rels[cells["Release"]]
			if r == nil {
				t.Fatalf("%s: row %v names no release", when, cells)
			}
			want := map[string]string{
				"Release": r.Name, "Revision": fmt.Sprint(r.Version), "Status": r.Info.Status.String(),
				"Chart": r.Chart.Metadata.Name + "-" + r.Chart.Metadata.Version, "App Version": "9.8.7",
				"Description": r.Info.Description,
			}
			for col, v := range want {
				if cells[col] != v {
					t.Errorf("%s: %s: column %s is %q, want %q", when, r.Name, col, cells[col], v)
				}
			}
			if cells["Updated"] == "" {
				t.Errorf("%s: %s: column Updated is empty", when, r.Name)
			}
		}
	}
	check("after create")
	for name, r := range rels {
		u := withHooks(name, 1, map[string]int{"small": 0, "large": 2 << 20}[name])
		u.Info.Status = release.StatusSuperseded
		u.Info.Description = "superseded " + name
		u.Info.LastDeployed = r.Info.LastDeployed.Add(time.Hour)
		if err := s.Update(key(name, 1), u); err != nil {
			t.Fatal(err)
		}
		rels[name] = u
	}
	check("after update")
}

// serverTable returns the objects of res in ns as the Table the API server
// computes from the CRD's printer columns, as kubectl gets them.
func serverTable(t *testing.T, b *kubeBackend, ns, res string) metav1.Table {
	t.Helper()
	raw, err := body(b.c.rc.Get().Namespace(ns).Resource(res).
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
	return table
}
