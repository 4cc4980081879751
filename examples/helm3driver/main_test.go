package main

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/driver"

	"github.com/spf13/pflag"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"

	"github.com/helmstore/helmstore/helm3"
)

// seed stores a release web in each namespace of a new sqlite store that
// HELM_DRIVER=sqlite opens.
func seed(t *testing.T, namespaces ...string) {
	path := filepath.Join(t.TempDir(), "helm.db")
	t.Setenv("HELM_DRIVER_SQLITE_CONNECTION_STRING", path)
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none")) // the namespace is not the test machine's
	t.Setenv("HELM_NAMESPACE", "")
	store, err := helm3.Open(context.Background(), "sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	for _, ns := range namespaces {
		rls := &release.Release{Name: "web", Namespace: ns, Version: 1,
			Chart: &chart.Chart{Metadata: &chart.Metadata{Name: "web", Version: "1.0.0"}},
			Info:  &release.Info{Status: release.StatusDeployed}, Manifest: "kind: ConfigMap\n"}
		if err := storage.Init(store.Namespace(ns)).Create(rls); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRunWithSQLite(t *testing.T) {
	seed(t)
	var out strings.Builder
	if err := run(&out, &out, nil, "sqlite"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "0 releases in namespace default of the sqlite store (driver sqlite)") {
		t.Fatalf("output: %s", out.String())
	}
	err := run(&out, &out, nil, "nosuchdriver")
	if !errors.Is(err, helm3.ErrUnknownDriver) || !strings.Contains(err.Error(), "valid names are") {
		t.Fatalf("unknown driver: %v", err)
	}
}

// -n, --namespace and HELM_NAMESPACE pick the namespace, as in helm.
func TestNamespace(t *testing.T) {
	seed(t, "team-a", "team-b")
	for _, tc := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"-n", "team-a"}, "", "team-a"},
		{[]string{"--namespace=team-b"}, "", "team-b"},
		{nil, "team-b", "team-b"},
		{[]string{"-n", "team-a"}, "team-b", "team-a"},
	} {
		t.Setenv("HELM_NAMESPACE", tc.env)
		var out strings.Builder
		if err := run(&out, &out, tc.args, "sqlite"); err != nil {
			t.Fatalf("%q: %v", tc.args, err)
		}
		want := "1 releases in namespace " + tc.want + " of the sqlite store (driver sqlite)\n" + tc.want + "/web revision 1 deployed\n"
		if out.String() != want {
			t.Fatalf("args %q, HELM_NAMESPACE=%q:\n%s\nwant\n%s", tc.args, tc.env, out.String(), want)
		}
	}
}

func TestHelp(t *testing.T) {
	var out, usage strings.Builder
	if err := run(&out, &usage, []string{"-h"}, "sqlite"); !errors.Is(err, pflag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	if !strings.Contains(usage.String(), "-n, --namespace") {
		t.Fatalf("usage lacks -n:\n%s", usage.String())
	}
}

// The example imports every backend, so every helmstore name works with
// HELM_DRIVER, and driver's table of which package registers which name
// has no name that no backend registers: no import hint is left.
func TestEveryBackendRegistered(t *testing.T) {
	if got, want := driver.Drivers(), []string{"cosmos", "crsplit", "memstore", "mysql", "postgres", "redis", "sqlite"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("registered %v, want %v", got, want)
	}
	_, err := helm3.Open(context.Background(), "crsplt", "")
	want := `helmstore: unknown storage driver "crsplt" (did you mean "crsplit"?): registered backends are cosmos, crsplit, memstore, mysql, postgres, redis, sqlite`
	if err == nil || err.Error() != want {
		t.Fatalf("got  %v\nwant %s", err, want)
	}
}
