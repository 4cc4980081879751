package drivertest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	chart3 "helm.sh/helm/v3/pkg/chart"
	release3 "helm.sh/helm/v3/pkg/release"
	driver3 "helm.sh/helm/v3/pkg/storage/driver"
	helmtime "helm.sh/helm/v3/pkg/time"
	release4 "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb4 "helm.sh/helm/v4/pkg/release/v1"
	driver4 "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/helm4"
)

// helm3Release is a Helm 3 release using every field Helm 3's drivers
// keep, with times in several zones and to the nanosecond, and zero times
// (which Helm 3 writes as "").
func helm3Release(name, ns string, version int, status release3.Status) *release3.Release {
	t0 := time.Date(2024, 10, 27, 2, 30, 0, 987654321, zoneEast).Add(time.Duration(version) * time.Hour)
	dep := &chart3.Dependency{Name: "common", Version: "2.x", Repository: "oci://example.com/charts", Tags: []string{"base"},
		Enabled: true, ImportValues: []interface{}{"defaults"}, Alias: "lib"}
	return &release3.Release{
		Name: name, Namespace: ns, Version: version,
		Info: &release3.Info{
			FirstDeployed: helmtime.Time{Time: t0}, LastDeployed: helmtime.Time{Time: t0.Add(time.Hour).In(zoneWest)},
			Description: "Upgrade complete", Status: status, Notes: "Thank you for installing.",
		},
		Chart: &chart3.Chart{
			Metadata: &chart3.Metadata{Name: "demo", Version: "1.2.3", AppVersion: "4.5.6", APIVersion: chart3.APIVersionV2,
				Keywords: []string{"demo"}, Maintainers: []*chart3.Maintainer{{Name: "Ana"}}, Annotations: map[string]string{"category": "demo"},
				Dependencies: []*chart3.Dependency{dep}, Type: "application"},
			Lock:      &chart3.Lock{Generated: t0.Add(-time.Hour).In(zoneWest), Digest: "sha256:abc", Dependencies: []*chart3.Dependency{dep}},
			Templates: []*chart3.File{{Name: "templates/cm.yaml", Data: []byte("kind: ConfigMap\n")}, {Name: "templates/empty.yaml", Data: []byte{}}},
			Values:    map[string]interface{}{"greeting": "hello", "nested": map[string]interface{}{"list": []interface{}{1, "two", nil}}},
			Schema:    []byte(`{"type":"object"}`),
			Files:     []*chart3.File{{Name: "README.md", Data: []byte("# demo\n")}},
		},
		Config:   map[string]interface{}{"greeting": fmt.Sprintf("v%d", version)},
		Manifest: fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n", name),
		Hooks: []*release3.Hook{
			{Name: name + "-migrate", Kind: "Job", Path: "demo/templates/job.yaml", Manifest: "kind: Job\n",
				Events:         []release3.HookEvent{release3.HookPreUpgrade},
				LastRun:        release3.HookExecution{StartedAt: helmtime.Time{Time: t0.In(zoneWest)}, CompletedAt: helmtime.Time{Time: t0.Add(time.Minute)}, Phase: release3.HookPhaseFailed},
				Weight:         3,
				DeletePolicies: []release3.HookDeletePolicy{release3.HookSucceeded}},
			{Name: name + "-test", Kind: "Pod", Events: []release3.HookEvent{release3.HookTest}},
		},
		Labels: map[string]string{"team": "a"},
	}
}

// testCrossVersion checks one store under both faces against Helm's own
// Secrets drivers of both Helms over one set of Secrets: a release written
// through either face reads back through the other as Helm 4's (or Helm
// 3's) driver reads what the other Helm's driver wrote; what only Helm 4
// has is lost to a Helm 3 rewrite exactly as with Helm's drivers; List,
// Query and Delete work across the faces on releases from both.
func testCrossVersion(t *testing.T, h Harness) {
	const ns = "team-b" // one of the namespaces the suite uses (a harness on Kubernetes makes them)
	type stores struct {
		ours   twoFaces
		helm   helmSecrets
		reader twoFaces // the faces reads go through (ours, or a reopened store's)
	}
	setup := func(t *testing.T) stores {
		f := onTwoFaces(t, h.open(t), ns)
		return stores{ours: f, helm: newHelmSecrets(ns), reader: f}
	}
	// helm3To4 writes r through Helm 3's face and Helm 3's driver and reads
	// it through Helm 4's, and the reverse.
	helm3To4 := func(t *testing.T, s stores, what string, r *release3.Release) {
		t.Helper()
		k := key(r.Name, r.Version)
		create3(t, what, s.ours.h3, s.helm.h3, k, r)
		same4Get(t, what+": written by Helm 3, read by Helm 4", s.reader.h4, s.helm.h4, k)
		same3Get(t, what+": written by Helm 3, read by Helm 3", s.reader.h3, s.helm.h3, k)
	}
	helm4To3 := func(t *testing.T, s stores, what string, r *rspb4.Release) {
		t.Helper()
		k := key(r.Name, r.Version)
		for _, d := range []driver4.Driver{s.ours.h4, s.helm.h4} {
			if err := d.Create(k, r); err != nil {
				t.Fatalf("%s: Helm 4 create %s (%s): %v", what, k, d.Name(), err)
			}
		}
		same3Get(t, what+": written by Helm 4, read by Helm 3", s.reader.h3, s.helm.h3, k)
		same4Get(t, what+": written by Helm 4, read by Helm 4", s.reader.h4, s.helm.h4, k)
	}
	cross := func(t *testing.T, s stores) {
		t.Run("Helm3ToHelm4", func(t *testing.T) {
			helm3To4(t, s, "every field", helm3Release("every3", ns, 1, release3.StatusDeployed))
			zero := helm3Release("zero-times", ns, 2, release3.StatusFailed)
			zero.Info.FirstDeployed, zero.Info.LastDeployed = helmtime.Time{}, helmtime.Time{Time: time.Time{}.In(zoneWest)}
			zero.Hooks[0].LastRun = release3.HookExecution{}
			zero.Chart.Lock.Generated = time.Time{}
			helm3To4(t, s, "zero times", zero)
			helm3To4(t, s, "bare", &release3.Release{Name: "bare3", Namespace: ns, Version: 1, Info: &release3.Info{Status: release3.StatusPendingUpgrade}})
		})
		t.Run("Helm4ToHelm3", func(t *testing.T) {
			for _, v := range helm4Variants(ns) {
				helm4To3(t, s, v.name, v.rls)
			}
		})
	}
	t.Run("OneStore", func(t *testing.T) { cross(t, setup(t)) })
	t.Run("Reopened", func(t *testing.T) {
		// Written through one store, read through another over its data,
		// as another process (a Helm 4 tool beside a Helm 3 one) reads it.
		w := h.open(t)
		s := stores{ours: onTwoFaces(t, w, ns), helm: newHelmSecrets(ns), reader: onTwoFaces(t, h.reopen(t, w), ns)}
		cross(t, s)
	})
	t.Run("Helm3StatusUpdate", func(t *testing.T) {
		s := setup(t)
		// An upgrade by a Helm 3 tool of a release a Helm 4 tool installed
		// marks it superseded: Helm 3 reads it (dropping what it has no
		// field for) and writes back what it read.
		r := helm4Release("app", ns, 1, rcommon.StatusDeployed)
		k := key("app", 1)
		for _, d := range []driver4.Driver{s.ours.h4, s.helm.h4} {
			if err := d.Create(k, r); err != nil {
				t.Fatal(err)
			}
		}
		for _, d := range []driver3.Driver{s.ours.h3, s.helm.h3} {
			old, err := d.Get(k)
			if err != nil {
				t.Fatalf("Helm 3 get (%s): %v", d.Name(), err)
			}
			old.Info.Status, old.Info.Description = release3.StatusSuperseded, "Superseded by 2"
			if err := d.Update(k, old); err != nil {
				t.Fatalf("Helm 3 update (%s): %v", d.Name(), err)
			}
		}
		same4Get(t, "read by Helm 4 after a Helm 3 update", s.ours.h4, s.helm.h4, k)
		same3Get(t, "read by Helm 3 after a Helm 3 update", s.ours.h3, s.helm.h3, k)
		// What the docs say of it: every field only Helm 4 has is gone.
		got, err := s.helm.h4.Get(k)
		if err != nil {
			t.Fatal(err)
		}
		if kept := helm4OnlyFields(got.(*rspb4.Release)); len(kept) > 0 {
			t.Fatalf("Helm's own drivers now keep %v through a Helm 3 update: update docs/library.md and docs/semantics.md, which say they are lost", kept)
		}
		// And a Helm 4 update of status after it keeps the rest as Helm 4 does.
		for _, d := range []driver4.Driver{s.ours.h4, s.helm.h4} {
			old, err := d.Get(k)
			if err != nil {
				t.Fatal(err)
			}
			u := v1Of(t, "get", old)
			u.Info.Status = rcommon.StatusDeployed
			if err := d.Update(k, u); err != nil {
				t.Fatalf("Helm 4 update (%s): %v", d.Name(), err)
			}
		}
		same4Get(t, "read by Helm 4 after a Helm 4 update", s.ours.h4, s.helm.h4, k)
		same3Get(t, "read by Helm 3 after a Helm 4 update", s.ours.h3, s.helm.h3, k)
	})
	t.Run("Helm4StatusUpdate", func(t *testing.T) {
		s := setup(t)
		// The reverse: a Helm 4 tool superseding a release a Helm 3 tool
		// installed writes Helm 4's form of it, which Helm 3 still reads.
		r := helm3Release("app", ns, 1, release3.StatusDeployed)
		k := key("app", 1)
		create3(t, "create", s.ours.h3, s.helm.h3, k, r)
		for _, d := range []driver4.Driver{s.ours.h4, s.helm.h4} {
			old, err := d.Get(k)
			if err != nil {
				t.Fatal(err)
			}
			u := v1Of(t, "get", old)
			u.Info.Status, u.ApplyMethod = rcommon.StatusSuperseded, string(rspb4.ApplyMethodServerSideApply)
			if err := d.Update(k, u); err != nil {
				t.Fatalf("Helm 4 update (%s): %v", d.Name(), err)
			}
		}
		same3Get(t, "read by Helm 3 after a Helm 4 update", s.ours.h3, s.helm.h3, k)
		same4Get(t, "read by Helm 4 after a Helm 4 update", s.ours.h4, s.helm.h4, k)
	})
	t.Run("MixedListQuery", func(t *testing.T) {
		s := setup(t)
		// app: v1 and v2 by Helm 3, v3 by Helm 4; other: v1 by Helm 4.
		for v := 1; v <= 2; v++ {
			create3(t, "create", s.ours.h3, s.helm.h3, key("app", v), helm3Release("app", ns, v, release3.StatusSuperseded))
		}
		for _, r := range []*rspb4.Release{helm4Release("app", ns, 3, rcommon.StatusDeployed), helm4Release("other", ns, 1, rcommon.StatusFailed)} {
			for _, d := range []driver4.Driver{s.ours.h4, s.helm.h4} {
				if err := d.Create(key(r.Name, r.Version), r); err != nil {
					t.Fatal(err)
				}
			}
		}
		same4Lists(t, "Helm 4: ", s.ours.h4, s.helm.h4, map[string]string{"team": "a"})
		same3Lists(t, "Helm 3: ", s.ours.h3, s.helm.h3, map[string]string{"team": "a"})
	})
	t.Run("DeleteOtherFace", func(t *testing.T) {
		s := setup(t)
		// Written by Helm 3, deleted by Helm 4 ...
		create3(t, "create", s.ours.h3, s.helm.h3, key("app", 1), helm3Release("app", ns, 1, release3.StatusDeployed))
		got, err := s.ours.h4.Delete(key("app", 1))
		if err != nil {
			t.Fatalf("Helm 4 delete of a release Helm 3 wrote: %v", err)
		}
		want, err := s.helm.h4.Delete(key("app", 1))
		if err != nil {
			t.Fatal(err)
		}
		sameAsHelm(t, "Helm 4 delete of a release Helm 3 wrote", v1Of(t, "delete", got), want)
		// ... and written by Helm 4, deleted by Helm 3.
		r4 := helm4Release("app", ns, 2, rcommon.StatusDeployed)
		for _, d := range []driver4.Driver{s.ours.h4, s.helm.h4} {
			if err := d.Create(key("app", 2), r4); err != nil {
				t.Fatal(err)
			}
		}
		got3, err := s.ours.h3.Delete(key("app", 2))
		if err != nil {
			t.Fatalf("Helm 3 delete of a release Helm 4 wrote: %v", err)
		}
		want3, err := s.helm.h3.Delete(key("app", 2))
		if err != nil {
			t.Fatal(err)
		}
		sameAsHelm(t, "Helm 3 delete of a release Helm 4 wrote", got3, want3)
		for v := 1; v <= 2; v++ {
			if _, err := s.ours.h3.Get(key("app", v)); !errors.Is(err, helm3.ErrReleaseNotFound) {
				t.Fatalf("Helm 3 get of deleted %s: %v, want helm3.ErrReleaseNotFound", key("app", v), err)
			}
			if _, err := s.ours.h4.Get(key("app", v)); !errors.Is(err, helm4.ErrReleaseNotFound) {
				t.Fatalf("Helm 4 get of deleted %s: %v, want helm4.ErrReleaseNotFound", key("app", v), err)
			}
		}
		if rs, err := s.ours.h4.List(func(release4.Releaser) bool { return true }); err != nil || len(rs) != 0 {
			t.Fatalf("Helm 4 list after the deletes: %d releases, %v; want none", len(rs), err)
		}
	})
}

// helm4OnlyFields names the fields only Helm 4 has that r holds a value in
// (not zero).
func helm4OnlyFields(r *rspb4.Release) []string {
	var kept []string
	if r.ApplyMethod != "" {
		kept = append(kept, "ApplyMethod")
	}
	if r.Info != nil && r.Info.RollbackRevision != 0 {
		kept = append(kept, "Info.RollbackRevision")
	}
	if c := r.Chart; c != nil {
		if !c.ModTime.IsZero() {
			kept = append(kept, "Chart.ModTime")
		}
		if !c.SchemaModTime.IsZero() {
			kept = append(kept, "Chart.SchemaModTime")
		}
		for _, f := range append(c.Templates, c.Files...) {
			if f != nil && !f.ModTime.IsZero() {
				kept = append(kept, "File.ModTime of "+f.Name)
			}
		}
	}
	return kept
}

// create3 creates r as k through s and Helm 3's driver oracle.
func create3(t *testing.T, what string, s helm3.Store, oracle driver3.Driver, k string, r *release3.Release) {
	t.Helper()
	for _, d := range []driver3.Driver{s, oracle} {
		if err := d.Create(k, r); err != nil {
			t.Fatalf("%s: Helm 3 create %s (%s): %v", what, k, d.Name(), err)
		}
	}
}

// same3Get fails t unless s's Get of k is deep-equal to oracle's, Helm 3's
// driver's.
func same3Get(t *testing.T, what string, s, oracle driver3.Driver, k string) {
	t.Helper()
	got, err := s.Get(k)
	if err != nil {
		t.Fatalf("%s %s: %v", what, k, err)
	}
	want, err := oracle.Get(k)
	if err != nil {
		t.Fatalf("Helm's %s %s: %v", what, k, err)
	}
	sameAsHelm(t, what, got, want)
}

// same3Lists is same4Lists through Helm 3.
func same3Lists(t *testing.T, what string, s, oracle driver3.Driver, labels map[string]string) {
	t.Helper()
	for _, f := range []struct {
		name string
		f    func(*release3.Release) bool
	}{
		{"list", func(*release3.Release) bool { return true }},
		{"list deployed", func(r *release3.Release) bool { return r.Info != nil && r.Info.Status == release3.StatusDeployed }},
	} {
		got, err := s.List(f.f)
		if err != nil {
			t.Fatalf("%s%s: %v", what, f.name, err)
		}
		want, err := oracle.List(f.f)
		if err != nil {
			t.Fatal(err)
		}
		sameListAsHelm(t, what+f.name, got, want)
	}
	all, err := oracle.List(func(*release3.Release) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	queries := []map[string]string{{"owner": "helm", "status": "deployed"}, {"status": "superseded"}, labels}
	for _, r := range all {
		queries = append(queries, map[string]string{"name": r.Name, "owner": "helm"})
	}
	for _, q := range queries {
		got, gerr := s.Query(q)
		want, werr := oracle.Query(q)
		if errors.Is(werr, driver3.ErrReleaseNotFound) {
			if !errors.Is(gerr, helm3.ErrReleaseNotFound) {
				t.Fatalf("%squery %v: %d releases, %v; want helm3.ErrReleaseNotFound", what, q, len(got), gerr)
			}
			continue
		}
		if werr != nil || gerr != nil {
			t.Fatalf("%squery %v: %v (Helm's: %v)", what, q, gerr, werr)
		}
		sameListAsHelm(t, fmt.Sprintf("%squery %v", what, q), got, want)
	}
}
