package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"

	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/helm4"
)

// Releases a Helm 3 tool wrote (package helm3) are what this Helm 4 tool
// lists, from the namespace -n or HELM_NAMESPACE picks; an unknown driver
// name is ErrUnknownDriver.
func TestListsWhatHelm3Wrote(t *testing.T) {
	path := filepath.Join(t.TempDir(), "helm.db")
	t.Setenv("HELM_DRIVER_SQLITE_CONNECTION_STRING", path)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	t.Setenv("HELM_NAMESPACE", "team-b")
	store, err := helm3.Open(context.Background(), "sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"team-a", "team-b"} {
		rls := &release.Release{Name: "web", Namespace: ns, Version: 1,
			Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "web", Version: "1.0.0"}},
			Info:  &release.Info{Status: release.StatusDeployed}}
		if err := storage.Init(store.Namespace(ns)).Create(rls); err != nil {
			t.Fatal(err)
		}
	}
	store.Close()
	for args, want := range map[string]string{
		"-n team-a": "1 releases in namespace team-a of the sqlite store (driver sqlite)\nteam-a/web revision 1 deployed\n",
		"":          "1 releases in namespace team-b of the sqlite store (driver sqlite)\nteam-b/web revision 1 deployed\n",
	} {
		var out, usage strings.Builder
		if err := run(&out, &usage, strings.Fields(args), "sqlite"); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		if out.String() != want {
			t.Fatalf("args %q:\n%s\nwant\n%s", args, out.String(), want)
		}
	}
	var out strings.Builder
	if err := run(&out, &out, nil, "nosuchdriver"); !errors.Is(err, helm4.ErrUnknownDriver) {
		t.Fatalf("unknown driver: %v", err)
	}
}
