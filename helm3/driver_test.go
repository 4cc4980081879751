package helm3_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/helmstore/helmstore/internal/engine"
	"github.com/helmstore/helmstore/internal/registry"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	helmdriver "helm.sh/helm/v3/pkg/storage/driver"
	"k8s.io/cli-runtime/pkg/genericclioptions"

	"github.com/helmstore/helmstore/helm3"
	_ "github.com/helmstore/helmstore/sql"
)

func TestInitPassesHelmNamesToHelm(t *testing.T) {
	getter := genericclioptions.NewConfigFlags(false)
	for name, want := range map[string]string{"memory": "Memory", "secret": "Secret", "": "Secret", "configmaps": "ConfigMap"} {
		cfg := new(action.Configuration)
		if err := helm3.Init(cfg, getter, "default", name, func(string, ...interface{}) {}); err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if got := cfg.Releases.Driver.Name(); got != want {
			t.Fatalf("HELM_DRIVER=%q gave driver %q, want Helm's %q", name, got, want)
		}
	}
}

func TestInitUnknownDriverListsValidNames(t *testing.T) {
	err := helm3.Init(new(action.Configuration), genericclioptions.NewConfigFlags(false), "default", "mongo", nil)
	if !errors.Is(err, helm3.ErrUnknownDriver) {
		t.Fatalf("got %v, want ErrUnknownDriver", err)
	}
	for _, name := range []string{"secret", "configmap", "memory", "sql", "postgres", "sqlite"} {
		if !strings.Contains(err.Error(), name) {
			t.Fatalf("error %q does not list %q", err, name)
		}
	}
}

func TestInitOpensOursFromEnvAndSharesThePool(t *testing.T) {
	t.Setenv("HELM_DRIVER_SQLITE_CONNECTION_STRING", filepath.Join(t.TempDir(), "helm.db"))
	getter := genericclioptions.NewConfigFlags(false)
	a, b := new(action.Configuration), new(action.Configuration)
	if err := helm3.Init(a, getter, "team-a", "sqlite", nil); err != nil {
		t.Fatal(err)
	}
	if err := helm3.Init(b, getter, "team-b", "sqlite", nil); err != nil {
		t.Fatal(err)
	}
	if a.KubeClient == nil || a.Log == nil {
		t.Fatal("Init did not set up the rest of the configuration as Helm's Init does")
	}
	sa, sb := a.Releases.Driver.(helm3.Store), b.Releases.Driver.(helm3.Store)
	if sa.Name() != "sqlite" || engine.Of(sa).Backend() != engine.Of(sb).Backend() {
		t.Fatal("two Inits with the same driver and connection string opened two pools")
	}
	r := &release.Release{Name: "x", Namespace: "team-a", Version: 1, Info: &release.Info{Status: release.StatusDeployed}}
	if err := a.Releases.Create(r); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Releases.Get("x", 1); !errors.Is(err, helmdriver.ErrReleaseNotFound) {
		t.Fatalf("team-b's configuration sees team-a's release: %v", err)
	}
	if got, err := a.Releases.Get("x", 1); err != nil || got.Name != "x" {
		t.Fatalf("team-a get: %v", err)
	}
}

func TestPasswordsNeverInErrors(t *testing.T) {
	const pw = "s3cretPW"
	for _, c := range []struct{ name, conn string }{
		{"postgres", "postgres://helm:" + pw + "@127.0.0.1:1/helm?sslmode=disable&connect_timeout=2"},
		{"postgres", "host=127.0.0.1 port=1 user=helm password=" + pw + " connect_timeout=2"},
		{"postgres", "postgres://helm:" + pw + "@127.0.0.1:1/helm?sslmode=bogus"},
		{"postgres", "not a url password=" + pw + " ::"},
	} {
		_, err := helm3.Open(context.Background(), c.name, c.conn)
		if err == nil {
			t.Fatalf("%s %q: opened", c.name, registry.Redact(c.conn))
		}
		if strings.Contains(err.Error(), pw) {
			t.Fatalf("error contains the password: %v", err)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:pw@h:5432/db?sslmode=disable":  "postgres://u:xxxxx@h:5432/db?sslmode=disable",
		"host=h user=u password=pw dbname=d":         "host=h user=u password=xxxxx dbname=d",
		"host=h password='p w' dbname=d":             "host=h password=xxxxx dbname=d",
		"u:pw@tcp(127.0.0.1:3306)/test?tls=true":     "u:xxxxx@tcp(127.0.0.1:3306)/test?tls=true",
		"u:p@w:rd@tcp(h)/db":                         "u:xxxxx@tcp(h)/db",
		"AccountEndpoint=https://h/;AccountKey=k==;": "AccountEndpoint=https://h/;AccountKey=xxxxx;",
		"/var/lib/helm.db":                           "/var/lib/helm.db",
	} {
		if got := registry.Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
