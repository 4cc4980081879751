package crsplit

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/helmstore/helmstore/driver"
	"github.com/helmstore/helmstore/helm3"
	"github.com/helmstore/helmstore/internal/testing/testenv"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
)

func configMapChart() *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{Name: "greeter", Version: "1.2.3", AppVersion: "2.0", APIVersion: chart.APIVersionV2},
		Templates: []*chart.File{{Name: "templates/cm.yaml", Data: []byte(`apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-greeting
data:
  greeting: {{ .Values.greeting | quote }}
`)}},
		Values: map[string]interface{}{"greeting": "hello"},
	}
}

// TestInitHelmActions selects crsplit as HELM_DRIVER through helm3.Init
// with the RESTClientGetter Helm builds from its flags, and runs real Helm
// actions: the chart's resources land in the cluster through Helm's own
// client, the releases in Release objects.
func TestInitHelmActions(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	t.Setenv(driver.ConnectionStringEnv(Name), "")
	cfg := new(action.Configuration)
	if err := helm3.Init(cfg, k.Getter(kubeenv.Admin, ns), ns, Name, t.Logf); err != nil {
		t.Fatal(err)
	}
	ch := configMapChart()
	inst := action.NewInstall(cfg)
	inst.ReleaseName, inst.Namespace = "greeter", ns
	if _, err := inst.Run(ch, map[string]interface{}{"greeting": "hi"}); err != nil {
		t.Fatal(err)
	}
	cs := kubeClient(t, k, kubeenv.Admin)
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctxT(t), "greeter-greeting", metav1.GetOptions{})
	if err != nil || cm.Data["greeting"] != "hi" {
		t.Fatalf("the chart's ConfigMap: %v %v", cm, err)
	}
	for v := 1; v <= 3; v++ {
		up := action.NewUpgrade(cfg)
		up.Namespace, up.MaxHistory = ns, 3
		if _, err := up.Run("greeter", ch, map[string]interface{}{"greeting": strings.Repeat("hey", v)}); err != nil {
			t.Fatal(err)
		}
	}
	hist, err := action.NewHistory(cfg).Run("greeter")
	if err != nil || len(hist) != 3 {
		t.Fatalf("history: %d revisions, %v (MaxHistory 3)", len(hist), err)
	}
	if hist[len(hist)-1].Version != 4 || hist[len(hist)-1].Info.Status != release.StatusDeployed {
		t.Fatalf("latest revision %d %s", hist[len(hist)-1].Version, hist[len(hist)-1].Info.Status)
	}
	store, _ := openAs(t, k, kubeenv.Admin, ns)
	st, err := store.Stats(ctxT(t))
	if err != nil || st.Releases != 3 || st.Parts["chart"] != 1 || st.Parts["values"] != 3 {
		t.Fatalf("after install, 3 upgrades and pruning to 3 revisions: %+v, %v", st, err)
	}
	// Helm's default driver was not used.
	if secrets, _ := cs.CoreV1().Secrets(ns).List(ctxT(t), metav1.ListOptions{LabelSelector: "owner=helm"}); len(secrets.Items) != 0 {
		t.Fatalf("%d Helm release Secrets written", len(secrets.Items))
	}
	if _, err := action.NewUninstall(cfg).Run("greeter"); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).Get(ctxT(t), "greeter-greeting", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("ConfigMap after uninstall: %v", err)
	}
	if st, _ := store.Stats(ctxT(t)); st.Releases != 0 || st.TotalParts() != 0 {
		t.Fatalf("after uninstall: %+v", st)
	}
}

// TestInitContexts: the connection string names the kubeconfig context to
// use; without it, the getter's own context (and its user) is used.
func TestInitContexts(t *testing.T) {
	k := cluster(t)
	ns := newNamespace(t, k)
	r := smallRelease("app", ns, 1, "c")

	// bob has no rights; the connection string picks the admin context.
	t.Setenv(driver.ConnectionStringEnv(Name), kubeenv.Admin)
	cfg := new(action.Configuration)
	if err := helm3.Init(cfg, k.Getter("bob", ns), ns, Name, t.Logf); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Releases.Create(r); err != nil {
		t.Fatalf("create through the admin context: %v", err)
	}

	t.Setenv(driver.ConnectionStringEnv(Name), "")
	cfg = new(action.Configuration)
	if err := helm3.Init(cfg, k.Getter("bob", ns), ns, Name, t.Logf); err != nil {
		t.Fatal(err)
	}
	_, err := cfg.Releases.Get("app", 1)
	if !errors.Is(err, ErrForbidden) || errors.Is(err, helm3.ErrReleaseNotFound) || !strings.Contains(err.Error(), `"bob"`) {
		t.Fatalf("get as bob: %v; want a permission error naming bob", err)
	}

	t.Setenv(driver.ConnectionStringEnv(Name), "no-such-context")
	cfg = new(action.Configuration)
	err = helm3.Init(cfg, k.Getter("bob", ns), ns, Name, t.Logf)
	if err == nil || !strings.Contains(err.Error(), "no-such-context") {
		t.Fatalf("unknown context: %v", err)
	}
}

// TestUnreachable: a cluster that does not answer is an error that says so,
// never "not found".
func TestUnreachable(t *testing.T) {
	dead := &rest.Config{Host: "https://127.0.0.1:" + strconv.Itoa(testenv.FreePort(t)), BearerToken: "x", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := openStore(ctx, dead); !errors.Is(err, ErrUnreachable) || !errors.Is(err, helm3.ErrUnavailable) {
		t.Fatalf("open: %v, want ErrUnreachable and helm3.ErrUnavailable", err)
	}
	// A store whose server goes away.
	c, err := newClient(dead)
	if err != nil {
		t.Fatal(err)
	}
	s := helm3.New(newBackend(c, t.Logf, 0), &driver.Config{Name: Name})
	_, err = s.Get(key("app", 1))
	if !errors.Is(err, ErrUnreachable) || !errors.Is(err, helm3.ErrUnavailable) || errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("get: %v", err)
	}
	if _, err := s.Query(map[string]string{"name": "app"}); err == helm3.ErrReleaseNotFound || !errors.Is(err, ErrUnreachable) {
		t.Fatalf("query: %v", err)
	}
	if _, err := s.Delete(key("app", 1)); errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("delete: %v", err)
	}
	if err := s.Update(key("app", 1), smallRelease("app", "default", 1, "c")); errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("update: %v", err)
	}
}

// TestCRDsMissing: a server without the helmstore.io resources is reported
// as such, by Open and by a store whose resources vanish, not as "not found".
func TestCRDsMissing(t *testing.T) {
	k := cluster(t)
	cfg := k.Config(kubeenv.Admin)
	// A client asking for a version of the group nobody serves.
	bc, err := newClientVersion(cfg, "v0alpha9")
	if err != nil {
		t.Fatal(err)
	}
	s := helm3.New(newBackend(bc, t.Logf, 0), &driver.Config{Name: Name})
	_, err = s.Get(key("app", 1))
	if !errors.Is(err, ErrCRDsNotInstalled) || errors.Is(err, helm3.ErrReleaseNotFound) {
		t.Fatalf("get without the resources: %v", err)
	}
	if _, err := bc.resources(ctxT(t)); !errors.Is(err, ErrCRDsNotInstalled) {
		t.Fatalf("discovery without the resources: %v", err)
	}
}

// TestInstallCRDs: installing again (an upgrade) is harmless, and the
// schemas are structural.
func TestInstallCRDs(t *testing.T) {
	k := cluster(t)
	if err := InstallCRDs(ctxT(t), k.Config(kubeenv.Admin)); err != nil {
		t.Fatalf("second install: %v", err)
	}
	crds, err := CRDs()
	if err != nil || len(crds) != 5 {
		t.Fatalf("%d CRDs, %v", len(crds), err)
	}
	cs, err := apiextensions.NewForConfig(k.Config(kubeenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range crds {
		if crd.Spec.Scope != "Namespaced" || crd.Spec.Group != Group {
			t.Fatalf("%s: scope %s group %s", crd.Name, crd.Spec.Scope, crd.Spec.Group)
		}
		got, err := cs.ApiextensionsV1().CustomResourceDefinitions().Get(ctxT(t), crd.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range got.Status.Conditions {
			if c.Type == apiextensionsv1.NonStructuralSchema && c.Status == apiextensionsv1.ConditionTrue {
				t.Fatalf("%s: schema is not structural: %s", crd.Name, c.Message)
			}
		}
		if !established(got) {
			t.Fatalf("%s is not established", crd.Name)
		}
	}
	if _, err := openStore(ctxT(t), k.Config(kubeenv.Admin)); err != nil {
		t.Fatal(err)
	}
}
