package main_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/repo/v1"
)

// lifecycleFixture is what the lifecycle scenarios use: a chart as a
// directory, two versions of it packaged in a chart repository served
// over HTTP, values files, and helm's configuration directories.
type lifecycleFixture struct {
	dir      string // {dir}: charts, values and archives
	repoURL  string // {repo}: the chart repository
	home     string // HELM_*_HOME's parent
	chartDir string // {chart}: version 0.2.0, unpacked
	oci      string // {oci}: the chart in an OCI registry, after pushOCI
}

// pushOCI starts an OCI registry (go-containerregistry's, in memory) for
// the rest of t and pushes both versions of the chart to it with helm.
func (f *lifecycleFixture) pushOCI(t *testing.T, helm, kubeconfig string) {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, v := range []string{"0.1.0", "0.2.0"} {
		cmd := exec.Command(helm, "push", filepath.Join(f.dir, "repo", "demo-"+v+".tgz"), "oci://"+host+"/charts", "--plain-http")
		cmd.Env = f.helmEnv(4, kubeconfig)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("helm push: %v\n%s", err, out)
		}
	}
	f.oci = "oci://" + host + "/charts/demo"
}

// demoChart writes the demo chart at version into dir/demo-<version>: a
// ConfigMap of the values, a pre-install/pre-upgrade hook, a test hook
// (ConfigMaps, which need no kubelet), a CRD under crds/, notes, an object
// the API server refuses when .Values.fail is set, and with .Values.deploy
// a Deployment, which never becomes ready on an API server without
// controllers (for the wait paths).
func demoChart(t *testing.T, dir, version string) string {
	t.Helper()
	c := filepath.Join(dir, "demo-"+version)
	files := map[string]string{
		"Chart.yaml":  "apiVersion: v2\nname: demo\nversion: " + version + "\nappVersion: \"1." + version + "\"\ndescription: a chart of ConfigMaps\n",
		"values.yaml": "greeting: hello\nreplicas: 1\nlist: [a, b]\nnested:\n  keep: chart\n  drop: chart\n# A null default (kube-state-metrics' hostUsers): Helm 3 computes values with it, Helm 4 without.\nhostUsers: ~\n",
		"templates/cm.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-values
  labels:
    chart: {{ .Chart.Name }}-{{ .Chart.Version }}
data:
  values: {{ toJson .Values | quote }}
  revision: {{ .Release.Revision | quote }}
`,
		"templates/svc.yaml": `apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}-svc
spec:
  ports:
  - port: 80
    name: http
`,
		"templates/hook.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-hook
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-weight: "-1"
    helm.sh/hook-delete-policy: before-hook-creation
data:
  revision: {{ .Release.Revision | quote }}
`,
		"templates/tests/test.yaml": `apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-test
  annotations:
    helm.sh/hook: test
data:
  greeting: {{ .Values.greeting | quote }}
`,
		"templates/fail.yaml": `{{- if .Values.fail }}
apiVersion: v1
kind: ConfigMap
metadata:
  name: Not_A_Valid_Name
{{- end }}
`,
		"templates/deploy.yaml": `{{- if .Values.deploy }}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
      - name: web
        image: registry.example/web:1
{{- end }}
`,
		"templates/NOTES.txt": "Greeting: {{ .Values.greeting }} (revision {{ .Release.Revision }})\n",
		"crds/crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.golden.helmstore.test
spec:
  group: golden.helmstore.test
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`,
	}
	for name, body := range files {
		p := filepath.Join(c, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// newLifecycleFixture writes the charts, packages them into a repository
// served until t ends, and writes the values files.
func newLifecycleFixture(t *testing.T) *lifecycleFixture {
	t.Helper()
	dir := t.TempDir()
	f := &lifecycleFixture{dir: dir, home: t.TempDir()}
	repoDir := filepath.Join(dir, "repo")
	if err := os.MkdirAll(repoDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"0.1.0", "0.2.0"} {
		c := demoChart(t, dir, v)
		ch, err := loader.LoadDir(c)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := chartutil.Save(ch, repoDir); err != nil {
			t.Fatal(err)
		}
		f.chartDir = c
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(repoDir)))
	t.Cleanup(srv.Close)
	f.repoURL = srv.URL
	idx, err := repo.IndexDirectory(repoDir, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	idx.SortEntries()
	if err := idx.WriteFile(filepath.Join(repoDir, "index.yaml"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("values.yaml", "greeting: from a file\nnested:\n  keep: file\n")
	write("override.yaml", "replicas: 3\n")
	write("bad.yaml", "greeting: [unclosed\n")
	write("motd.txt", "a file's\ncontent\n")
	// A post-renderer: an executable for Helm 3, a postrenderer plugin
	// (installed by installPostRenderer) for Helm 4.
	write("pr.sh", "#!/bin/sh\nexec sed 's/chart: demo-/chart: postrendered-demo-/'\n")
	plugin := filepath.Join(dir, "golden-pr")
	if err := os.MkdirAll(plugin, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{
		"plugin.yaml": "apiVersion: v1\ntype: postrenderer/v1\nname: golden-pr\nversion: 0.1.0\nruntime: subprocess\nruntimeConfig:\n  platformCommand:\n  - command: ${HELM_PLUGIN_DIR}/pr.sh\n",
		"pr.sh":       "#!/bin/sh\nexec sed 's/chart: demo-/chart: postrendered-demo-/'\n",
	} {
		if err := os.WriteFile(filepath.Join(plugin, name), []byte(body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(dir, "pr.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	return f
}

// postRenderer installs the post-renderer plugin into Helm 4's plugins
// and returns the --post-renderer flag of Helm major.
func (f *lifecycleFixture) postRenderer(t *testing.T, major int, helm, kubeconfig string) string {
	t.Helper()
	if major == 3 {
		return "--post-renderer=" + filepath.Join(f.dir, "pr.sh")
	}
	cmd := exec.Command(helm, "plugin", "install", filepath.Join(f.dir, "golden-pr"))
	cmd.Env = f.helmEnv(major, kubeconfig)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("helm plugin install golden-pr: %v\n%s", err, out)
	}
	return "--post-renderer=golden-pr"
}

// expand replaces {dir}, {repo}, {chart} and {oci} in args.
func (f *lifecycleFixture) expand(args []string) []string {
	out := make([]string, len(args))
	r := strings.NewReplacer("{dir}", f.dir, "{repo}", f.repoURL, "{chart}", f.chartDir, "{oci}", f.oci)
	for i, a := range args {
		out[i] = r.Replace(a)
	}
	return out
}

// helmEnv is the environment of helm and helmstore in the scenarios of
// Helm major: helm's directories in the fixture (one per Helm), the API
// server's kubeconfig, no HELM_DRIVER.
func (f *lifecycleFixture) helmEnv(major int, kubeconfig string) []string {
	h := filepath.Join(f.home, "helm"+string(rune('0'+major)))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HELM_") && !strings.HasPrefix(kv, "HELMSTORE_") && !strings.HasPrefix(kv, "KUBECONFIG=") {
			env = append(env, kv)
		}
	}
	return append(env, "KUBECONFIG="+kubeconfig, "HELM_CONFIG_HOME="+filepath.Join(h, "config"),
		"HELM_DATA_HOME="+filepath.Join(h, "data"), "HELM_CACHE_HOME="+filepath.Join(h, "cache"))
}
