package drivertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"testing"
	"time"

	release3 "helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v4/pkg/chart/common"
	chart4 "helm.sh/helm/v4/pkg/chart/v2"
	release4 "helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb4 "helm.sh/helm/v4/pkg/release/v1"
	driver4 "helm.sh/helm/v4/pkg/storage/driver"

	"github.com/helmstore/helmstore/helm4"
)

// Zones of the times in the Helm 4 releases: Helm's JSON keeps a time's
// offset, not its zone's name, and gives it back in a zone of its own.
var (
	zoneEast = time.FixedZone("IST", 5*3600+1800)
	zoneWest = time.FixedZone("", -7*3600)
)

// helm4Release is a Helm 4 release using every field Helm 4's drivers
// keep, those only Helm 4 has among them (ApplyMethod,
// Info.RollbackRevision, Chart.ModTime, Chart.SchemaModTime and the mod
// times of the chart's files), with times in several zones and to the
// nanosecond.
func helm4Release(name, ns string, version int, status rcommon.Status) *rspb4.Release {
	t0 := time.Date(2025, 3, 9, 1, 59, 59, 123456789, zoneWest).Add(time.Duration(version) * time.Hour)
	dep := &chart4.Dependency{Name: "common", Version: "2.x", Repository: "oci://example.com/charts", Tags: []string{"base"},
		Enabled: true, ImportValues: []any{"defaults", map[string]any{"child": "a", "parent": "b"}}, Alias: "lib"}
	return &rspb4.Release{
		Name: name, Namespace: ns, Version: version,
		Info: &rspb4.Info{
			FirstDeployed: t0, LastDeployed: t0.Add(90 * time.Minute).In(zoneEast),
			Description: "Rollback to 1", Status: status, RollbackRevision: 1, Notes: "Thank you for installing.",
		},
		Chart: &chart4.Chart{
			Metadata: &chart4.Metadata{
				Name: "demo", Home: "https://example.com", Sources: []string{"https://example.com/src"}, Version: "1.2.3",
				Description: "a demo", Keywords: []string{"demo", "test"},
				Maintainers: []*chart4.Maintainer{{Name: "Ana", Email: "ana@example.com", URL: "https://example.com/ana"}},
				APIVersion:  chart4.APIVersionV2, AppVersion: "4.5.6", Annotations: map[string]string{"category": "demo"},
				KubeVersion: ">=1.30.0-0", Dependencies: []*chart4.Dependency{dep}, Type: "application",
			},
			Lock:          &chart4.Lock{Generated: t0.Add(-24 * time.Hour).In(zoneEast), Digest: "sha256:abc", Dependencies: []*chart4.Dependency{dep}},
			Templates:     []*common.File{{Name: "templates/cm.yaml", Data: []byte("kind: ConfigMap\n"), ModTime: t0.Add(-time.Hour)}, {Name: "templates/empty.yaml", Data: []byte{}, ModTime: t0.In(time.UTC)}},
			Values:        map[string]any{"greeting": "hello", "replicas": 3, "nested": map[string]any{"list": []any{1, "two", nil, true}}},
			Schema:        []byte(`{"type":"object"}`),
			SchemaModTime: t0.Add(-2 * time.Hour).In(zoneEast),
			Files:         []*common.File{{Name: "README.md", Data: []byte("# demo\n"), ModTime: t0.Add(-3 * time.Hour).In(zoneEast)}, {Name: "LICENSE", Data: []byte("MIT\n")}},
			ModTime:       t0.Add(-4 * time.Hour),
		},
		Config:   map[string]any{"greeting": fmt.Sprintf("v%d", version), "zones": []any{"east", "west"}},
		Manifest: fmt.Sprintf("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\ndata:\n  v: %q\n", name, fmt.Sprint(version)),
		Hooks: []*rspb4.Hook{
			{Name: name + "-migrate", Kind: "Job", Path: "demo/templates/job.yaml", Manifest: "kind: Job\n",
				Events:            []rspb4.HookEvent{rspb4.HookPreInstall, rspb4.HookPostUpgrade},
				LastRun:           rspb4.HookExecution{StartedAt: t0.Add(time.Minute).In(zoneEast), CompletedAt: t0.Add(2 * time.Minute), Phase: rspb4.HookPhaseSucceeded},
				Weight:            -5,
				DeletePolicies:    []rspb4.HookDeletePolicy{rspb4.HookBeforeHookCreation},
				OutputLogPolicies: []rspb4.HookOutputLogPolicy{rspb4.HookOutputOnFailed}},
			{Name: name + "-test", Kind: "Pod", Path: "demo/templates/test.yaml", Events: []rspb4.HookEvent{rspb4.HookTest}},
		},
		Labels:      map[string]string{"team": "a", "tier": "backend"},
		ApplyMethod: string(rspb4.ApplyMethodServerSideApply),
	}
}

// helm4Variants are Helm 4 releases each testing one corner of the fields
// only Helm 4 has.
func helm4Variants(ns string) []struct {
	name string
	rls  *rspb4.Release
} {
	none := helm4Release("plain", ns, 1, rcommon.StatusDeployed)
	none.ApplyMethod, none.Info.RollbackRevision = "", 0
	none.Chart.ModTime, none.Chart.SchemaModTime = time.Time{}, time.Time{}
	for _, f := range append(none.Chart.Templates, none.Chart.Files...) {
		f.ModTime = time.Time{}
	}
	// The zero instant in a zone: IsZero, but not time.Time{}. Helm leaves
	// out the omitzero fields (Chart.ModTime, File.ModTime) and writes
	// SchemaModTime, which is not omitzero, as the instant in its zone.
	zero := helm4Release("zero-in-zone", ns, 1, rcommon.StatusDeployed)
	zero.Chart.ModTime = time.Time{}.In(zoneEast)
	zero.Chart.SchemaModTime = time.Time{}.In(zoneWest)
	zero.Chart.Templates[0].ModTime = time.Time{}.In(zoneWest)
	zero.Info.Deleted = time.Time{}.In(zoneEast)
	zero.Hooks[0].LastRun.StartedAt = time.Time{}.In(zoneEast)
	zero.Chart.Lock.Generated = time.Time{}.In(zoneWest)
	// A time with a monotonic reading, in the local zone, as time.Now gives.
	now := helm4Release("now", ns, 2, rcommon.StatusUninstalled)
	now.Info.LastDeployed, now.Info.Deleted = time.Now(), time.Now()
	now.Chart.ModTime = time.Now()
	now.ApplyMethod = string(rspb4.ApplyMethodClientSideApply)
	// Nothing but what a release must have.
	bare := &rspb4.Release{Name: "bare", Namespace: ns, Version: 1, Info: &rspb4.Info{Status: rcommon.StatusPendingInstall}}
	// A chart with no metadata, files or values, and a schema time alone.
	empty := &rspb4.Release{Name: "empty-chart", Namespace: ns, Version: 3, Info: &rspb4.Info{Status: rcommon.StatusFailed},
		Chart: &chart4.Chart{SchemaModTime: time.Date(2024, 2, 29, 23, 59, 59, 999999999, zoneEast)}}
	return []struct {
		name string
		rls  *rspb4.Release
	}{
		{"EveryField", helm4Release("every", ns, 1, rcommon.StatusDeployed)},
		{"NoHelm4Fields", none},
		{"ZeroInZone", zero},
		{"Now", now},
		{"Bare", bare},
		{"EmptyChart", empty},
	}
}

// testHelm4Releases checks the Helm 4 face of every backend against Helm
// 4's own Secrets driver: releases with every field only Helm 4 has read
// back as Helm's driver reads them back, given as value or pointer;
// anything but a v1 release is refused, and nothing is stored.
func testHelm4Releases(t *testing.T, h Harness) {
	const ns = "team-a" // one of the namespaces the suite uses (a harness on Kubernetes makes them)
	t.Run("RoundTrip", func(t *testing.T) {
		s := onTwoFaces(t, h.open(t), ns).h4
		oracle := newHelmSecrets(ns).h4
		for _, v := range helm4Variants(ns) {
			k := key(v.rls.Name, v.rls.Version)
			for _, d := range []driver4.Driver{s, oracle} {
				if err := d.Create(k, v.rls); err != nil {
					t.Fatalf("%s: create %s: %v", v.name, k, err)
				}
			}
			same4Get(t, v.name+": get", s, oracle, k)
			// An Update as Helm makes it (an upgrade superseding the
			// release), of the release as read back.
			for _, d := range []driver4.Driver{s, oracle} {
				r, err := d.Get(k)
				if err != nil {
					t.Fatal(err)
				}
				u := v1Of(t, "get", r)
				u.Info.Status, u.Info.Description = rcommon.StatusSuperseded, "Superseded"
				u.Labels = map[string]string{"team": "b"}
				if err := d.Update(k, u); err != nil {
					t.Fatalf("%s: update %s: %v", v.name, k, err)
				}
			}
			same4Get(t, v.name+": get after update", s, oracle, k)
		}
		same4Lists(t, "", s, oracle, map[string]string{"team": "b"})
		for _, v := range helm4Variants(ns) {
			k := key(v.rls.Name, v.rls.Version)
			got, err := s.Delete(k)
			if err != nil {
				t.Fatalf("%s: delete %s: %v", v.name, k, err)
			}
			want, err := oracle.Delete(k)
			if err != nil {
				t.Fatal(err)
			}
			sameAsHelm(t, v.name+": delete", v1Of(t, "delete", got), want)
		}
	})
	t.Run("ValueAndPointer", func(t *testing.T) {
		s := onTwoFaces(t, h.open(t), ns).h4
		oracle := newHelmSecrets(ns).h4
		r := helm4Release("app", ns, 1, rcommon.StatusDeployed)
		before := encoded4(t, r)
		if err := s.Create(key("app", 1), *r); err != nil {
			t.Fatalf("create of a v1.Release value: %v", err)
		}
		if err := oracle.Create(key("app", 1), r); err != nil {
			t.Fatal(err)
		}
		same4Get(t, "get of a release created as a value", s, oracle, key("app", 1))
		u := helm4Release("app", ns, 1, rcommon.StatusSuperseded)
		u.ApplyMethod, u.Info.RollbackRevision = string(rspb4.ApplyMethodClientSideApply), 7
		if err := s.Update(key("app", 1), *u); err != nil {
			t.Fatalf("update with a v1.Release value: %v", err)
		}
		if err := oracle.Update(key("app", 1), u); err != nil {
			t.Fatal(err)
		}
		same4Get(t, "get of a release updated with a value", s, oracle, key("app", 1))
		r2 := helm4Release("app", ns, 2, rcommon.StatusDeployed)
		for _, d := range []driver4.Driver{s, oracle} {
			if err := d.Create(key("app", 2), r2); err != nil {
				t.Fatalf("create of a *v1.Release: %v", err)
			}
		}
		same4Get(t, "get of a release created as a pointer", s, oracle, key("app", 2))
		if after := encoded4(t, r); after != before {
			t.Fatalf("the release given to Create as a value changed:\n got: %s\nwant: %s", after, before)
		}
		if after, before := encoded4(t, r2), encoded4(t, helm4Release("app", ns, 2, rcommon.StatusDeployed)); after != before {
			t.Fatalf("the release given to Create as a pointer changed:\n got: %s\nwant: %s", after, before)
		}
	})
	t.Run("Unsupported", func(t *testing.T) {
		s := onTwoFaces(t, h.open(t), ns).h4
		oracle := newHelmSecrets(ns).h4
		kept := helm4Release("kept", ns, 1, rcommon.StatusDeployed)
		for _, d := range []driver4.Driver{s, oracle} {
			if err := d.Create(key("kept", 1), kept); err != nil {
				t.Fatal(err)
			}
		}
		v3 := &release3.Release{Name: "app", Namespace: ns, Version: 1, Info: &release3.Info{Status: release3.StatusDeployed}}
		for _, bad := range []struct {
			name string
			rls  release4.Releaser
		}{
			{"nil", nil},
			{"typed nil", (*rspb4.Release)(nil)},
			{"Helm 3 release", v3},
			{"Helm 3 release value", *v3},
			{"string", "sh.helm.release.v1.app.v1"},
			{"pointer to a pointer", &kept},
			{"int", 1},
		} {
			for _, op := range []struct {
				name string
				key  string
				call func(driver4.Driver, string, release4.Releaser) error
			}{
				{"create", key("app", 1), driver4.Driver.Create},
				{"update", key("kept", 1), driver4.Driver.Update},
			} {
				what := fmt.Sprintf("%s of %s (%T)", op.name, bad.name, bad.rls)
				err := noPanic(t, what, func() error { return op.call(s, op.key, bad.rls) })
				if !errors.Is(err, helm4.ErrUnsupportedRelease) {
					t.Fatalf("%s: got error %v, want helm4.ErrUnsupportedRelease", what, err)
				}
				var re *helm4.ReleaseError
				if !errors.As(err, &re) || re.Key != op.key {
					t.Fatalf("%s: error %v names no release %s (a *helm4.ReleaseError)", what, err, op.key)
				}
				// Helm's own driver refuses it too, with an error or (for a
				// nil, typed or not) a nil pointer panic.
				if !refuses(func() error { return op.call(oracle, op.key, bad.rls) }) {
					t.Fatalf("Helm's own Secrets driver accepts the %s: the test's premise is wrong", what)
				}
			}
		}
		if _, err := s.Get(key("app", 1)); !errors.Is(err, helm4.ErrReleaseNotFound) {
			t.Fatalf("get after refused creates: %v, want helm4.ErrReleaseNotFound", err)
		}
		same4Get(t, "the release refused updates were given", s, oracle, key("kept", 1))
		same4Lists(t, "after refused writes: ", s, oracle, map[string]string{"team": "a"})
	})
}

// same4Get fails t unless s's Get of k returns a *v1.Release deep-equal to
// what oracle, Helm 4's driver, gives.
func same4Get(t *testing.T, what string, s, oracle driver4.Driver, k string) {
	t.Helper()
	got, err := s.Get(k)
	if err != nil {
		t.Fatalf("%s %s: %v", what, k, err)
	}
	want, err := oracle.Get(k)
	if err != nil {
		t.Fatalf("Helm's %s %s: %v", what, k, err)
	}
	sameAsHelm(t, what, v1Of(t, what, got), want)
}

// same4Lists fails t unless List, with no filter and with one, and Query
// (by name, by status and by labels) return through s what they return
// through oracle, each a *v1.Release.
func same4Lists(t *testing.T, what string, s, oracle driver4.Driver, labels map[string]string) {
	t.Helper()
	filters := []struct {
		name string
		f    func(release4.Releaser) bool
	}{
		{"list", func(release4.Releaser) bool { return true }},
		{"list deployed", func(r release4.Releaser) bool {
			v, ok := r.(*rspb4.Release)
			return ok && v.Info != nil && v.Info.Status == rcommon.StatusDeployed
		}},
	}
	for _, f := range filters {
		got, err := s.List(f.f)
		if err != nil {
			t.Fatalf("%s%s: %v", what, f.name, err)
		}
		want, err := oracle.List(f.f)
		if err != nil {
			t.Fatal(err)
		}
		sameListAsHelm(t, what+f.name, v1sOf(t, f.name, got), v1sOf(t, "Helm's "+f.name, want))
	}
	all, err := oracle.List(func(release4.Releaser) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	queries := []map[string]string{{"owner": "helm", "status": "deployed"}, {"status": "superseded"}, labels}
	for _, r := range all {
		queries = append(queries, map[string]string{"name": r.(*rspb4.Release).Name, "owner": "helm"})
	}
	for _, q := range queries {
		got, gerr := s.Query(q)
		want, werr := oracle.Query(q)
		if errors.Is(werr, helm4.ErrReleaseNotFound) {
			if !errors.Is(gerr, helm4.ErrReleaseNotFound) {
				t.Fatalf("%squery %v: %d releases, %v; want helm4.ErrReleaseNotFound", what, q, len(got), gerr)
			}
			continue
		}
		if werr != nil || gerr != nil {
			t.Fatalf("%squery %v: %v (Helm's: %v)", what, q, gerr, werr)
		}
		sameListAsHelm(t, fmt.Sprintf("%squery %v", what, q), v1sOf(t, "query", got), v1sOf(t, "Helm's query", want))
	}
}

// noPanic returns what f returns, failing t if f panics.
func noPanic(t *testing.T, what string, f func() error) (err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s panicked: %v", what, p)
		}
	}()
	return f()
}

// refuses reports whether f fails: returns an error or panics.
func refuses(f func() error) (refused bool) {
	defer func() {
		if recover() != nil {
			refused = true
		}
	}()
	return f() != nil
}

// encoded4 is r's JSON with its labels, to tell whether r changed.
func encoded4(t *testing.T, r *rspb4.Release) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	ls := maps.Clone(r.Labels)
	return fmt.Sprintf("%s %v", b, ls)
}
