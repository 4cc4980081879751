package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/pflag"
	"helm.sh/helm/v4/pkg/cli"
)

// The commands' Kubernetes client has bulkQPS (no client-side limit)
// unless --qps or HELM_QPS says otherwise (Helm leaves it at client-go's
// own default of 5 a second).
func TestQPS(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	for _, c := range []struct {
		env  string
		args []string
		want float32
	}{
		{"", nil, bulkQPS},
		{"7", nil, 7},
		{"", []string{"--qps", "3"}, 3},
	} {
		t.Setenv("HELM_QPS", c.env)
		e := &env{settings: cli.New()}
		fs := pflag.NewFlagSet("helmstore", pflag.ContinueOnError)
		e.settings.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := e.getter().ToRESTConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.QPS != c.want || cfg.Burst != 100 {
			t.Errorf("HELM_QPS=%q %v: QPS %v, burst %d; want %v, 100", c.env, c.args, cfg.QPS, cfg.Burst, c.want)
		}
	}
}
