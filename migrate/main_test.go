package migrate_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	rspb "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	_ "github.com/helmstore/helmstore/cosmos"
	"github.com/helmstore/helmstore/crsplit"
	"github.com/helmstore/helmstore/internal/testing/testenv/kubeenv"
	"github.com/helmstore/helmstore/migrate"
	_ "github.com/helmstore/helmstore/redis"
	_ "github.com/helmstore/helmstore/sql/postgres"
)

// TestMain builds (or finds) etcd and the Kubernetes binaries before the
// tests and stops the shared API server after them.
func TestMain(m *testing.M) {
	if _, err := kubeenv.Binaries(); err != nil {
		fmt.Fprintf(os.Stderr, "migrate tests: no etcd or Kubernetes binaries: %v\n", err)
	}
	code := m.Run()
	kubeenv.Stop()
	os.Exit(code)
}

var crds struct {
	once sync.Once
	err  error
}

// cluster returns the shared API server with crsplit's CRDs installed and
// the namespaces given.
func cluster(t testing.TB, namespaces ...string) *kubeenv.Server {
	t.Helper()
	k := kubeenv.Kube(t)
	crds.once.Do(func() { crds.err = crsplit.InstallCRDs(ctx(t), k.Config(kubeenv.Admin)) })
	if crds.err != nil {
		t.Fatalf("install CRDs: %v", crds.err)
	}
	cs, err := kubernetes.NewForConfig(k.Config(kubeenv.Admin))
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range namespaces {
		_, err := cs.CoreV1().Namespaces().Create(ctx(t), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	return k
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return c
}

// open opens a store by HELM_DRIVER name on the server k, closed when t ends.
// The Kubernetes client has no client-side rate limit, as the helmstore
// command's (client-go's default of 5 requests a second would time the
// limiter).
func open(t testing.TB, k *kubeenv.Server, name, conn string) migrate.Store {
	t.Helper()
	getter := k.Getter(kubeenv.Admin, "default").(*genericclioptions.ConfigFlags).WithWrapConfigFn(func(c *rest.Config) *rest.Config {
		c.QPS = -1
		return c
	})
	s, err := migrate.Open(ctx(t), name, conn, getter)
	if err != nil {
		t.Fatalf("open %s: %v", name, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// helmConfig is Helm 4's action configuration on its Secrets driver in ns.
func helmConfig(t testing.TB, k *kubeenv.Server, ns string) *action.Configuration {
	t.Helper()
	cfg := action.NewConfiguration()
	if err := cfg.Init(k.Getter(kubeenv.Admin, ns), ns, "secret"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// demoChart renders one ConfigMap of the values' data and notes.
func demoChart(version string) *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "demo", Version: version, AppVersion: "1.0"},
		Templates: []*common.File{
			{Name: "templates/cm.yaml", Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-cm\ndata:\n  data: {{ .Values.data | quote }}\n")},
			{Name: "templates/NOTES.txt", Data: []byte("{{ .Release.Name }} is installed.\n")},
		},
		Values: map[string]any{"data": "none"},
	}
}

// install installs (revision 1) and upgrades (revisions 2..n) release name
// in ns through Helm's actions, each revision with values of its own.
func install(t testing.TB, cfg *action.Configuration, ns, name string, n int, labels map[string]string) {
	t.Helper()
	in := action.NewInstall(cfg)
	in.Namespace, in.ReleaseName, in.WaitStrategy, in.Labels = ns, name, kube.HookOnlyStrategy, labels
	if _, err := in.Run(demoChart("0.1.0"), map[string]any{"data": name + "-1"}); err != nil {
		t.Fatalf("install %s/%s: %v", ns, name, err)
	}
	for v := 2; v <= n; v++ {
		upgrade(t, cfg, ns, name, fmt.Sprintf("%s-%d", name, v))
	}
}

func upgrade(t testing.TB, cfg *action.Configuration, ns, name, data string) {
	t.Helper()
	up := action.NewUpgrade(cfg)
	up.Namespace, up.WaitStrategy, up.MaxHistory = ns, kube.HookOnlyStrategy, 0
	if _, err := up.Run(name, demoChart("0.2.0"), map[string]any{"data": data}); err != nil {
		t.Fatalf("upgrade %s/%s: %v", ns, name, err)
	}
}

// snapshot reads every revision of ns ("": all) from s, by key.
func snapshot(t testing.TB, s migrate.Store, ns string) map[string]*rspb.Release {
	t.Helper()
	revs, err := s.Revisions(ctx(t), ns, "")
	if err != nil {
		t.Fatalf("%s: revisions: %v", s.Name(), err)
	}
	out := map[string]*rspb.Release{}
	for _, r := range revs {
		rls, err := s.Get(ctx(t), r)
		if err != nil {
			t.Fatalf("%s: get %s: %v", s.Name(), r, err)
		}
		out[r.Namespace+"/"+r.Key()] = rls
	}
	return out
}

// wantSame fails unless got holds exactly the revisions of want, each Equal.
func wantSame(t testing.TB, what string, want, got map[string]*rspb.Release) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d revisions, want %d", what, len(got), len(want))
	}
	for k, w := range want {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: %s missing", what, k)
			continue
		}
		if eq, err := migrate.Equal(w, g); err != nil || !eq {
			t.Errorf("%s: %s differs (%v)", what, k, err)
		}
	}
}
