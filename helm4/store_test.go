package helm4_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/release"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage"

	"github.com/helmstore/helmstore/helm4"
	"github.com/helmstore/helmstore/memstore"
)

func openMem(t *testing.T, opts ...helm4.Option) helm4.Store {
	t.Helper()
	s, err := helm4.Open(context.Background(), memstore.Name, "", opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// v4Release is a release with every field only Helm 4 has set.
func v4Release(name string, version int) *rspb.Release {
	at := time.Date(2026, 11, 3, 10, 4, 5, 600, time.FixedZone("x", 3600))
	return &rspb.Release{
		Name: name, Version: version, Namespace: "default", ApplyMethod: string(rspb.ApplyMethodServerSideApply),
		Info: &rspb.Info{FirstDeployed: at, LastDeployed: at, Status: rcommon.StatusDeployed, Description: "Rollback to 1", RollbackRevision: 1, Notes: "notes"},
		Chart: &chart.Chart{
			Metadata:      &chart.Metadata{Name: "demo", Version: "1.2.3", AppVersion: "4.5", APIVersion: "v2"},
			Values:        map[string]any{"replicas": 2.0, "image": map[string]any{"tag": "v1"}},
			Schema:        []byte(`{"type":"object"}`),
			SchemaModTime: at.Add(time.Minute),
			ModTime:       at.Add(time.Hour),
			Templates:     []*chartcommon.File{{Name: "templates/a.yaml", Data: []byte("kind: A"), ModTime: at.Add(2 * time.Hour)}, {Name: "templates/b.yaml", Data: []byte("kind: B")}},
			Files:         []*chartcommon.File{{Name: "README.md", Data: []byte("# demo"), ModTime: at}},
		},
		Config:   map[string]any{"replicas": 3.0},
		Manifest: "---\nkind: A\n",
		Hooks:    []*rspb.Hook{{Name: "pre", Kind: "Job", Path: "templates/hook.yaml", Manifest: "kind: Job", Events: []rspb.HookEvent{rspb.HookPreInstall}}},
		Labels:   map[string]string{"team": "a"},
	}
}

// helmJSON is what Helm 4's own Secrets and SQL drivers return for r: its
// JSON round trip, labels kept beside it.
func helmJSON(t *testing.T, r *rspb.Release) *rspb.Release {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	out := new(rspb.Release)
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
	out.Labels = map[string]string{}
	for k, v := range r.Labels {
		out.Labels[k] = v
	}
	return out
}

// customLabels drops the system labels a store adds.
func customLabels(r *rspb.Release) *rspb.Release {
	c := *r
	c.Labels = map[string]string{}
	for k, v := range r.Labels {
		switch k {
		case "name", "owner", "status", "version", "createdAt", "modifiedAt":
		default:
			c.Labels[k] = v
		}
	}
	return &c
}

// A release passed as a pointer or as a value is stored whole, Helm 4's
// new fields included, and read back as *v1.Release equal to what Helm 4's
// own drivers return for it.
func TestReleaserPointerAndValue(t *testing.T) {
	s := openMem(t)
	p := v4Release("ptr", 1)
	if err := s.Create("sh.helm.release.v1.ptr.v1", p); err != nil {
		t.Fatal(err)
	}
	v := v4Release("val", 1)
	if err := s.Create("sh.helm.release.v1.val.v1", *v); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]*rspb.Release{"sh.helm.release.v1.ptr.v1": p, "sh.helm.release.v1.val.v1": v} {
		got, err := s.Get(key)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := got.(*rspb.Release)
		if !ok {
			t.Fatalf("Get returned %T, want *v1.Release", got)
		}
		if w := helmJSON(t, want); !reflect.DeepEqual(customLabels(r), w) {
			gj, _ := json.Marshal(r)
			wj, _ := json.Marshal(w)
			t.Fatalf("%s read back differs from Helm 4's JSON round trip:\n got %s\nwant %s", key, gj, wj)
		}
		if r.ApplyMethod != "ssa" || r.Info.RollbackRevision != 1 || r.Chart.ModTime.IsZero() || r.Chart.Templates[0].ModTime.IsZero() || r.Chart.SchemaModTime.IsZero() {
			t.Fatalf("%s: Helm 4's fields were not kept: %+v", key, r)
		}
	}
	v.Info.Status = rcommon.StatusSuperseded
	if err := s.Update("sh.helm.release.v1.val.v1", *v); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get("sh.helm.release.v1.val.v1"); err != nil || got.(*rspb.Release).Info.Status != rcommon.StatusSuperseded {
		t.Fatalf("after Update by value: %v, %v", got, err)
	}
}

// Anything but a v1 release is refused with an error naming its type, and
// nothing is stored: never a panic.
func TestUnsupportedReleases(t *testing.T) {
	s := openMem(t)
	for _, r := range []release.Releaser{nil, (*rspb.Release)(nil), "a string", struct{ Name string }{"x"}, &struct{}{}} {
		for op, call := range map[string]func() error{
			"create": func() error { return s.Create("sh.helm.release.v1.x.v1", r) },
			"update": func() error { return s.Update("sh.helm.release.v1.x.v1", r) },
		} {
			err := call()
			if !errors.Is(err, helm4.ErrUnsupportedRelease) || errors.Is(err, helm4.ErrReleaseNotFound) {
				t.Errorf("%s of %T = %v; want ErrUnsupportedRelease", op, r, err)
			}
		}
	}
	if rs, err := s.Namespace("").List(func(release.Releaser) bool { return true }); err != nil || len(rs) != 0 {
		t.Fatalf("after refused writes: List = %v, %v; want nothing", rs, err)
	}
}

// Not found and already exists are Helm 4's bare sentinels, as Helm 4's
// drivers return them and tools compare them (==).
func TestErrorsAreHelm4s(t *testing.T) {
	s := openMem(t)
	_, err := s.Get("sh.helm.release.v1.none.v1")
	if err != helm4.ErrReleaseNotFound {
		t.Fatalf("Get of a missing release = %v; want Helm 4's ErrReleaseNotFound itself", err)
	}
	if _, err := s.Query(map[string]string{"name": "none"}); err != helm4.ErrReleaseNotFound {
		t.Fatalf("Query with no match = %v; want Helm 4's ErrReleaseNotFound itself", err)
	}
	r := v4Release("dup", 1)
	if err := s.Create("sh.helm.release.v1.dup.v1", r); err != nil {
		t.Fatal(err)
	}
	if err := s.Create("sh.helm.release.v1.dup.v1", r); err != helm4.ErrReleaseExists {
		t.Fatalf("second Create = %v; want Helm 4's ErrReleaseExists itself", err)
	}
	if _, err := s.Get("not-a-key"); !errors.Is(err, helm4.ErrInvalidKey) && !errors.Is(err, helm4.ErrReleaseNotFound) {
		t.Fatalf("Get of a bad key = %v", err)
	}
}

// The store logs through the handler WithLogger gives, and SetLogger
// replaces it for every view and for what storage.Init finds.
func TestLogger(t *testing.T) {
	var first, second bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	s := openMem(t, helm4.WithLogger(slog.NewTextHandler(&first, opts)))
	view := s.Namespace("other")
	st := storage.Init(view)
	st.Logger().Debug("one")
	if !strings.Contains(first.String(), "msg=one") {
		t.Fatalf("storage.Init's logger did not reach WithLogger's handler: %q", first.String())
	}
	s.SetLogger(slog.NewTextHandler(&second, opts))
	view.Logger().Debug("two")
	if strings.Contains(first.String(), "two") || !strings.Contains(second.String(), "msg=two") {
		t.Fatalf("SetLogger on the store did not move its views: first %q, second %q", first.String(), second.String())
	}
	st.Logger().Debug("three")
	if !strings.Contains(second.String(), "msg=three") {
		t.Fatalf("SetLogger did not move what storage.Init found: %q", second.String())
	}
}
